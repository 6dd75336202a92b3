/**
 * Team: turns per second through 3 replicas on one PostgreSQL database against 1 replica with the
 * JSONL ledger (one instant HTTP member on the fake vendor API), and the database's share of a turn's
 * wall: the store's work of one turn (reserve, three ledger records, settle) timed on its own
 * against a turn's wall through a replica. Needs PostgreSQL binaries (initdb, pg_ctl).
 */
import { join } from "node:path";
import { connectStore } from "../../../src/store/open_store.ts";
import { cluster, createDatabase } from "../../../tests/support/postgres.ts";
import { messagesBody, pool, streamMessages } from "../client.ts";
import { type ServerProcess, startGateway } from "../processes.ts";
import { quantile, summarize } from "../results.ts";
import { runs, type Scenario } from "../scenario.ts";
import { failureOf } from "./turns.ts";
import { startFakeVendor } from "../../../tests/support/fake_vendor/mod.ts";

const CONCURRENCY = 12;
/** The member's key variable (the fake vendor takes any key). */
const KEY_VARIABLE = "COUNCIL_BENCH_TEAM_KEY";
const ANSWER = "TEAM-ANSWER: the member answered.";

/** A council of one `anthropic` member on the fake vendor at `origin`. */
function oneMember(origin: string): Record<string, unknown> {
  return {
    fanOutPolicy: "never",
    defaultAgents: [{
      name: "api",
      runner: "anthropic",
      model: "claude-sonnet-4-5",
      baseUrl: origin,
      apiKeyEnv: KEY_VARIABLE,
    }],
  };
}

/** Runs `count` turns (each its own session) round-robin over `origins`; turns per second. */
async function throughput(origins: string[], count: number, tag: string) {
  const errors: string[] = [];
  const walls: number[] = [];
  const started = performance.now();
  await pool(count, CONCURRENCY, async (i) => {
    const turn = await streamMessages(origins[i % origins.length], messagesBody(`${tag} ${i}`));
    const failure = failureOf(turn, ANSWER);
    if (failure) errors.push(failure);
    else walls.push(turn.wallMs);
  });
  const seconds = (performance.now() - started) / 1000;
  return { turnsPerS: count / seconds, walls, errors };
}

/** The store's work for one turn, timed alone: the reserve on the turn's path, then the rest. */
async function storeWork(url: string, count: number) {
  const store = await connectStore(url, { replicaId: "bench" });
  const reserve: number[] = [];
  const total: number[] = [];
  try {
    for (let i = 0; i < count; i++) {
      const session = `bench-${i}`;
      const record = { v: 1, time: new Date().toISOString(), turn: `t${i}`, session };
      const t0 = performance.now();
      const result = await store.sessions.reserve(session, { maxTurns: 100, maxSessionUsd: 5 }, 0);
      reserve.push(performance.now() - t0);
      await store.ledger.append({ ...record, kind: "start" });
      await store.ledger.append({ ...record, kind: "call", call: { agent: "api" } });
      if (result.kind === "run") await store.sessions.settle(result.reservation, 0.01);
      await store.ledger.append(record);
      total.push(performance.now() - t0);
    }
  } finally {
    await store.close();
  }
  return { reserve, total };
}

export const team: Scenario = {
  name: "team",
  description: "turns/s: 3 replicas on PostgreSQL vs 1 with the JSONL ledger; DB share of a turn",
  async run(context) {
    Deno.env.set(KEY_VARIABLE, "bench");
    const servers: ServerProcess[] = [];
    const count = runs(context, 300, 60);
    await using vendor = startFakeVendor({ answer: { text: ANSWER } });
    try {
      const member = oneMember(vendor.origin);
      const single = await startGateway(context, {
        ...member,
        ledger: join(context.tempDir, "team-ledger.jsonl"),
      });
      servers.push(single);
      context.log("team: 1 replica with the JSONL ledger");
      await throughput([single.origin], 10, "warm-up");
      const jsonl = await throughput([single.origin], count, "jsonl");
      const running = await cluster();
      const url = await createDatabase(running, `bench_${Deno.pid}`);
      const replicas = await Promise.all(
        [0, 1, 2].map(() => startGateway(context, { ...member, database: url })),
      );
      servers.push(...replicas);
      context.log("team: 3 replicas on PostgreSQL");
      const origins = replicas.map((replica) => replica.origin);
      await throughput(origins, 10, "warm-up");
      const shared = await throughput(origins, count, "shared");
      const work = await storeWork(url, runs(context, 200, 40));
      const wall = quantile(shared.walls, 0.5);
      return {
        figures: [
          {
            scenario: "team",
            name: "Team: turns/s, 3 replicas on PostgreSQL (instant HTTP member)",
            unit: "turns/s",
            gateway: shared.turnsPerS,
            baseline: { label: "1 replica, JSONL ledger", value: jsonl.turnsPerS },
            note: `${count} turns, ${CONCURRENCY} at a time; errors ` +
              `${shared.errors.length} / ${jsonl.errors.length}` +
              `${
                [...shared.errors, ...jsonl.errors].slice(0, 1).map((e) => ` (${e})`).join("")
              }; ` +
              `per-turn wall p50 ` +
              `${wall.toFixed(1)} / ${quantile(jsonl.walls, 0.5).toFixed(1)} ms`,
          },
          {
            scenario: "team",
            name: "Team: the database's work of one turn, timed alone",
            unit: "ms",
            gateway: summarize(work.total),
            note: `on the turn's path (the reserve) ${summarize(work.reserve).p50.toFixed(2)} ms ` +
              `p50 = ${(100 * summarize(work.reserve).p50 / wall).toFixed(1)}% of a turn's wall ` +
              `through a replica (${wall.toFixed(1)} ms p50); all of it ` +
              `${(100 * summarize(work.total).p50 / wall).toFixed(1)}%`,
          },
        ],
        details: {
          jsonlTurnsPerS: jsonl.turnsPerS,
          sharedTurnsPerS: shared.turnsPerS,
          sharedWallP50Ms: wall,
          reserveP50Ms: summarize(work.reserve).p50,
          storeWorkP50Ms: summarize(work.total).p50,
        },
      };
    } finally {
      await Promise.all(servers.map((server) => server.stop()));
    }
  },
};
