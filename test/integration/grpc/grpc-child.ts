/**
 * Child process for crash tests: broker + gRPC front in one process (what `tsmq start` runs once
 * the front is wired there), on the store directory and gRPC port given as arguments.
 * Usage: node --import tsx grpc-child.ts <storeDir> <grpcPort> [key=value ...]
 * Prints "grpc child started <port>" when serving; SIGTERM shuts down cleanly.
 */
import { startHarness } from './grpc-harness.js';

const [storeDir, port, ...rest] = process.argv.slice(2);
const options: Record<string, string> = { grpcListenPort: port ?? '0' };
for (const kv of rest) options[kv.slice(0, kv.indexOf('='))] = kv.slice(kv.indexOf('=') + 1);
const h = await startHarness(options, undefined, false, storeDir);
console.log(`grpc child started ${h.front.port}`);
process.on('SIGTERM', () => {
  void h.front
    .shutdown()
    .then(() => h.broker.shutdown())
    .then(() => process.exit(0));
});
