/** council-gateway entry point: runs the CLI and exits with its code. */
import { runCli } from "./src/cli/mod.ts";

if (import.meta.main) Deno.exit(await runCli(Deno.args));
