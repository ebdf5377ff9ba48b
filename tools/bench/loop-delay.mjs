// Preloaded into a server the bench measures (`node --import ./tools/bench/loop-delay.mjs
// dist/cli/main.js …`), nothing of the product's: the event loop's delay as
// perf_hooks.monitorEventLoopDelay sees it inside that process. On SIGUSR2 it writes the
// histogram since the last SIGUSR2 (ms: p50, p99, max, and the count) as one JSON line to the
// file named by $BENCH_LOOP_DELAY_FILE, then starts over.
import { appendFileSync } from 'node:fs';
import { monitorEventLoopDelay } from 'node:perf_hooks';

const file = process.env.BENCH_LOOP_DELAY_FILE;
if (file) {
  const h = monitorEventLoopDelay({ resolution: 1 });
  h.enable();
  process.on('SIGUSR2', () => {
    const ms = (ns) => Math.round(ns / 1e4) / 100;
    appendFileSync(file, `${JSON.stringify({ p50: ms(h.percentile(50)), p99: ms(h.percentile(99)), max: ms(h.max), count: h.count })}\n`);
    h.reset();
  });
}
