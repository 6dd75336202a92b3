/**
 * The spawn helper: a 369-byte static Linux x86_64 program that calls setsid(2) and execs its
 * arguments, so a child leads its own process group without an extra dynamically linked exec
 * (setsid(1) costs about 0.8 ms per child, on every turn's critical path) and without Deno's
 * `detached`, which forks the whole gateway. Installed once per machine into the user's cache
 * directory, content-checked and self-tested at start-up.
 */
import { dirname, join } from "node:path";

/** What the helper writes to stderr when it cannot exec: prefix, executable, separator, errno. */
const HELPER_PREFIX = "council-gateway spawn helper: cannot execute ";
const HELPER_SEPARATOR = ": errno ";
/** The helper's exit code when it cannot exec. */
export const HELPER_EXEC_FAILED_CODE = 127;

/**
 * The helper's machine code (Linux x86_64, position-independent), assembled from:
 *
 * ```asm
 *   mov eax, 112                 ; setsid()
 *   syscall
 *   mov rdi, [rsp]               ; argc
 *   lea rsi, [rsp + 16]          ; argv + 1
 *   lea rdx, [rsp + rdi*8 + 16]  ; envp = argv + argc + 1
 *   mov rdi, [rsi]               ; argv[1] (NULL without arguments: EFAULT)
 *   mov eax, 59                  ; execve(argv[1], argv + 1, envp)
 *   syscall
 *   neg eax                      ; only reached on failure: errno, kept in r12
 *   mov r12d, eax
 *   mov edi, 2                   ; write(2, prefix, 45)
 *   lea rsi, [rip + prefix]
 *   mov edx, 45
 *   mov eax, 1
 *   syscall
 *   mov rsi, [rsp + 16]          ; write(2, argv[1], strlen(argv[1])) unless NULL
 *   test rsi, rsi
 *   jz path_done
 *   xor edx, edx
 * length:
 *   cmp byte ptr [rsi + rdx], 0
 *   je length_done
 *   inc rdx
 *   jmp length
 * length_done:
 *   mov edi, 2
 *   mov eax, 1
 *   syscall
 * path_done:
 *   mov edi, 2                   ; write(2, separator, 8)
 *   lea rsi, [rip + separator]
 *   mov edx, 8
 *   mov eax, 1
 *   syscall
 *   mov eax, r12d                ; the errno in decimal and "\n", built backwards on the stack
 *   sub rsp, 32
 *   lea r9, [rsp + 31]
 *   mov byte ptr [r9], 10
 *   mov r8, r9
 *   mov ecx, 10
 * digit:
 *   xor edx, edx
 *   div ecx
 *   add dl, 48
 *   dec r8
 *   mov [r8], dl
 *   test eax, eax
 *   jnz digit
 *   mov edi, 2                   ; write(2, r8, r9 - r8 + 1)
 *   mov rsi, r8
 *   mov rdx, r9
 *   sub rdx, r8
 *   inc rdx
 *   mov eax, 1
 *   syscall
 *   mov edi, 127                 ; exit(127)
 *   mov eax, 60
 *   syscall
 * prefix:
 *   .ascii "council-gateway spawn helper: cannot execute "
 * separator:
 *   .ascii ": errno "
 * ```
 */
const X86_64_CODE = "b8700000000f05488b3c24488d742410488d54fc10488b3eb83b0000000f05f7d84189c4" +
  "bf02000000488d3594000000ba2d000000b8010000000f05488b7424104885f6741931d2803c1600740548ffc2ebf5" +
  "bf02000000b8010000000f05bf02000000488d3586000000ba08000000b8010000000f054489e04883ec204c8d4c24" +
  "1f41c6010a4d89c8b90a00000031d2f7f180c23049ffc841881085c075efbf020000004c89c64c89ca4c29c248ffc2" +
  "b8010000000f05bf7f000000b83c0000000f05" + hex(HELPER_PREFIX) + hex(HELPER_SEPARATOR);

function hex(text: string): string {
  return [...new TextEncoder().encode(text)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

const LOAD_ADDRESS = 0x400000;
const ELF_HEADER_BYTES = 64;
const PROGRAM_HEADER_BYTES = 56;

/** The helper as an ELF executable: one header, one read+execute segment, the code. */
export function spawnHelperImage(): Uint8Array {
  const code = Uint8Array.from(X86_64_CODE.match(/../g)!, (byte) => parseInt(byte, 16));
  const codeOffset = ELF_HEADER_BYTES + PROGRAM_HEADER_BYTES;
  const image = new Uint8Array(codeOffset + code.length);
  const view = new DataView(image.buffer);
  image.set([0x7f, 0x45, 0x4c, 0x46, 2, 1, 1, 0]); // ELF, 64-bit, little-endian, v1, SysV
  view.setUint16(16, 2, true); // ET_EXEC
  view.setUint16(18, 0x3e, true); // EM_X86_64
  view.setUint32(20, 1, true); // EV_CURRENT
  view.setBigUint64(24, BigInt(LOAD_ADDRESS + codeOffset), true); // entry point
  view.setBigUint64(32, BigInt(ELF_HEADER_BYTES), true); // program headers' offset
  view.setUint16(52, ELF_HEADER_BYTES, true);
  view.setUint16(54, PROGRAM_HEADER_BYTES, true);
  view.setUint16(56, 1, true); // one program header
  const ph = ELF_HEADER_BYTES;
  view.setUint32(ph, 1, true); // PT_LOAD
  view.setUint32(ph + 4, 5, true); // PF_R | PF_X
  view.setBigUint64(ph + 16, BigInt(LOAD_ADDRESS), true); // p_vaddr (from file offset 0)
  view.setBigUint64(ph + 24, BigInt(LOAD_ADDRESS), true); // p_paddr
  view.setBigUint64(ph + 32, BigInt(image.length), true); // p_filesz
  view.setBigUint64(ph + 40, BigInt(image.length), true); // p_memsz
  view.setBigUint64(ph + 48, 0x1000n, true); // p_align
  image.set(code, codeOffset);
  return image;
}

/** Where the helper is kept: `$XDG_CACHE_HOME/council-gateway`, else `~/.cache/council-gateway`. */
export function helperDirectory(env: (name: string) => string | undefined): string | undefined {
  const cache = env("XDG_CACHE_HOME") || (env("HOME") ? join(env("HOME")!, ".cache") : undefined);
  return cache?.startsWith("/") ? join(cache, "council-gateway") : undefined;
}

/**
 * The errno in the helper's failure line for `executable` (empty when it had no arguments), or
 * undefined when `line` is not that line.
 */
export function helperExecErrno(line: string, executable: string): number | undefined {
  const start = `${HELPER_PREFIX}${executable}${HELPER_SEPARATOR}`;
  if (!line.startsWith(start)) return undefined;
  const errno = line.slice(start.length);
  return /^\d{1,4}$/.test(errno) ? Number(errno) : undefined;
}

/** A file name that changes with the image, so an older image is never mistaken for this one. */
async function helperFileName(image: Uint8Array): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", image as BufferSource));
  return `spawn-helper-${
    [...digest.slice(0, 6)].map((b) => b.toString(16).padStart(2, "0")).join("")
  }`;
}

function ownUid(): number | null {
  try {
    return Deno.uid();
  } catch {
    return null;
  }
}

/**
 * Why `directory` is no place for a program we run: not a real directory of ours, or writable by
 * others (who could then swap the file between our check and a spawn). Undefined when it is fine.
 */
function unsafeDirectory(directory: string): string | undefined {
  const info = Deno.lstatSync(directory);
  if (!info.isDirectory) return `${directory} is not a directory`;
  if (info.uid !== ownUid()) return `${directory} is owned by someone else`;
  if (info.mode === null || (info.mode & 0o022) !== 0) {
    return `${directory} is writable by others`;
  }
  // Others who may write the parent could rename this directory away and put theirs in its
  // place, unless the parent is sticky (as /tmp is).
  const parent = Deno.statSync(dirname(directory));
  if (parent.mode === null || ((parent.mode & 0o022) !== 0 && (parent.mode & 0o1000) === 0)) {
    return `${dirname(directory)} is writable by others`;
  }
  return undefined;
}

/** Whether `path` is a regular file of ours (not a link) holding exactly `image`, executable. */
function holdsImage(path: string, image: Uint8Array): boolean {
  try {
    const info = Deno.lstatSync(path);
    if (!info.isFile || info.mode === null || (info.mode & 0o100) === 0) return false;
    if (info.uid !== ownUid()) return false;
    // Writable by others: someone else could swap what we run.
    if ((info.mode & 0o022) !== 0) return false;
    const bytes = Deno.readFileSync(path);
    return bytes.length === image.length && bytes.every((byte, i) => byte === image[i]);
  } catch {
    return false;
  }
}

/** Writes the image beside `path` and renames it into place (readers never see half a file). */
async function writeImage(path: string, image: Uint8Array): Promise<void> {
  const partial = `${path}.${crypto.randomUUID()}.partial`;
  try {
    await Deno.writeFile(partial, image, { mode: 0o700, createNew: true });
    await Deno.chmod(partial, 0o700); // the umask may have taken bits away
    await Deno.rename(partial, path);
  } catch (err) {
    await Deno.remove(partial).catch(() => {});
    throw err;
  }
}

/** Runs the helper without arguments: it must start and report execve's EFAULT (errno 14). */
async function selfTest(path: string): Promise<string | undefined> {
  try {
    const output = await new Deno.Command(path, {
      clearEnv: true,
      stdin: "null",
      stdout: "null",
      stderr: "piped",
    }).output();
    const stderr = new TextDecoder().decode(output.stderr).trim();
    if (output.code === HELPER_EXEC_FAILED_CODE && helperExecErrno(stderr, "") === 14) {
      return undefined;
    }
    return `self-test gave exit code ${output.code} and ${JSON.stringify(stderr.slice(0, 200))}`;
  } catch (err) {
    return err instanceof Error ? err.message : String(err);
  }
}

export type HelperInstall = { path: string } | { error: string };

/**
 * Makes sure the helper is in `directory` (created 0700 when missing) and runs; the path, or why
 * it cannot be used (the caller then spawns through setsid(1) or Deno's `detached`).
 */
export async function installSpawnHelper(
  { directory, os = Deno.build.os, arch = Deno.build.arch }: {
    directory: string;
    os?: typeof Deno.build.os;
    arch?: typeof Deno.build.arch;
  },
): Promise<HelperInstall> {
  if (os !== "linux" || arch !== "x86_64") return { error: `not available on ${os} ${arch}` };
  const image = spawnHelperImage();
  const path = join(directory, await helperFileName(image));
  try {
    await Deno.mkdir(directory, { recursive: true, mode: 0o700 });
    const unsafe = unsafeDirectory(directory);
    if (unsafe) return { error: unsafe };
    if (!holdsImage(path, image)) {
      await writeImage(path, image);
      if (!holdsImage(path, image)) return { error: `${path} does not hold the helper` };
    }
  } catch (err) {
    return { error: `cannot write ${path}: ${err instanceof Error ? err.message : String(err)}` };
  }
  const failure = await selfTest(path);
  return failure ? { error: `${path}: ${failure}` } : { path };
}
