/**
 * Idle footprint: the gateway's RSS once started, and its growth after 1,000 turns (instant
 * fakes, 4 at a time), read after the turns with the server idle again (so after its idle
 * collection, a second after the last turn; the reading right after the last turn is in the
 * note). Baseline: the bare Deno.serve process, idle and after as many requests.
 */
import { messagesBody, pool, streamMessages } from "../client.ts";
import { councilConfig, fakeAgent, startBaselineServer, startGateway } from "../processes.ts";
import { runs, type Scenario } from "../scenario.ts";
import { failureOf } from "./turns.ts";

const signed = (mb: number) => `${mb >= 0 ? "+" : ""}${mb.toFixed(1)}`;

export const footprint: Scenario = {
  name: "footprint",
  description: "RSS idle after start, and its growth after 1,000 turns",
  async run(context) {
    const total = runs(context, 1000, 200);
    const checkpoint = Math.min(100, total);
    const agents = ["a", "b", "c"].map((name) => fakeAgent(context, name, "child.sh"));
    const [gateway, bare] = await Promise.all([
      startGateway(context, councilConfig(agents)),
      startBaselineServer(context),
    ]);
    const errors: string[] = [];
    const rss: Record<string, number> = {};
    try {
      [rss.idle, rss.bareIdle] = await Promise.all([gateway.idleRssMb(), bare.idleRssMb()]);
      const idleParts = await gateway.rssPartsMb();
      const turns = async (from: number, to: number) => {
        const done = await pool(
          to - from,
          4,
          (i) => streamMessages(gateway.origin, messagesBody(`Footprint turn ${from + i}`)),
        );
        for (const turn of done) {
          const failure = failureOf(turn);
          if (failure) errors.push(failure);
        }
      };
      await turns(0, checkpoint);
      rss.afterCheckpoint = await gateway.idleRssMb();
      await turns(checkpoint, total);
      rss.rightAfter = await gateway.rssMb();
      rss.after = await gateway.idleRssMb(2000);
      const afterParts = await gateway.rssPartsMb();
      rss.anonGrowth = afterParts.anon - idleParts.anon;
      rss.fileGrowth = afterParts.file - idleParts.file;
      await pool(total, 4, () => streamMessages(bare.origin, messagesBody("Footprint")));
      rss.bareAfter = await bare.idleRssMb(2000);
      context.log(`footprint: ${JSON.stringify(rss)}`);
    } finally {
      await Promise.all([gateway.stop(), bare.stop()]);
    }
    const growth = rss.after - rss.idle;
    const errorNote = errors.length ? `; ${errors.length} failed turns, first: ${errors[0]}` : "";
    return {
      figures: [
        {
          scenario: "footprint",
          name: "Idle RSS after start",
          unit: "MB",
          gateway: rss.idle,
          baseline: { label: "bare Deno.serve", value: rss.bareIdle },
          reference: "≤ 80 MB",
        },
        {
          scenario: "footprint",
          name: `RSS growth after ${total.toLocaleString("en")} turns`,
          unit: "MB",
          gateway: growth,
          baseline: {
            label: "bare Deno.serve, as many requests",
            value: rss.bareAfter - rss.bareIdle,
          },
          reference: "≤ 10 MB",
          note: `RSS ${rss.idle.toFixed(1)} MB idle → ${rss.afterCheckpoint.toFixed(1)} MB after ` +
            `${checkpoint} turns → ${rss.rightAfter.toFixed(1)} MB right after turn ${total} → ` +
            `${rss.after.toFixed(1)} MB idle again (anonymous ${signed(rss.anonGrowth)} MB, ` +
            `file-backed ${signed(rss.fileGrowth)} MB)${errorNote}`,
        },
      ],
      details: { rss, errors: errors.length },
    };
  },
};
