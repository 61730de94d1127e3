// Preloaded into a `tsmq start` process (node --import bench/soak/census.mjs dist/cli/main.js start ...):
// captures the nameserver, broker and gRPC front controllers and serves, on 127.0.0.1:$SOAK_CENSUS_PORT
// (default 15558), GET /census (size of every Map/Set/Array reachable from them, by field path, and
// the bytes of the ArrayBuffers under each path as `<path>#bytes`) and GET /gc (two full GCs, then
// process.memoryUsage() and the active handles/resources). A soak diagnostic, not for production.
import http from 'node:http';
import v8 from 'node:v8';
import vm from 'node:vm';
const ROOT = process.env.SOAK_DIST ?? new URL('../../dist', import.meta.url).pathname;
const roots = {};
const { BrokerController } = await import(`${ROOT}/broker/broker-controller.js`);
const { NamesrvController } = await import(`${ROOT}/namesrv/namesrv-controller.js`);
const { GrpcFront } = await import(`${ROOT}/grpc/grpc-front.js`);
const origCreate = BrokerController.create;
BrokerController.create = async function (...a) { const b = await origCreate.apply(this, a); roots.broker = b; return b; };
const nsStart = NamesrvController.prototype.start;
NamesrvController.prototype.start = function (...a) { roots.namesrv = this; return nsStart.apply(this, a); };
const gStart = GrpcFront.prototype.start;
if (gStart) GrpcFront.prototype.start = function (...a) { roots.grpc = this; return gStart.apply(this, a); };
const SKIP = new Set(['Socket', 'TLSSocket', 'Server', 'Http2Server', 'Http2Session', 'ServerHttp2Session', 'Pino', 'Logger', 'Timeout', 'Immediate', 'FileHandle', 'Worker', 'Registry']);
function census() {
  const sizes = new Map();
  const seen = new WeakSet(); const seenAb = new WeakSet();
  const add = (p, n) => sizes.set(p, (sizes.get(p) ?? 0) + n);
  const stack = Object.entries(roots).map(([k, v]) => [v, k, 0]);
  let visited = 0; let qi = 0;
  while (qi < stack.length) {
    const [o, path, depth] = stack[qi++]; if (qi > 200000) { stack.splice(0, qi); qi = 0; }
    if (o === null || typeof o !== 'object' || seen.has(o) || depth > 9) continue;
    if (ArrayBuffer.isView(o) || o instanceof ArrayBuffer) { const ab = o instanceof ArrayBuffer ? o : o.buffer; if (!seenAb.has(ab)) { seenAb.add(ab); add(path + '#bytes', ab.byteLength); } continue; }
    const cn = o.constructor?.name;
    if (cn && SKIP.has(cn)) { add(path + '<' + cn + '>', 1); continue; }
    if (typeof o.pipe === 'function' && typeof o.write === 'function') continue; // streams
    seen.add(o); visited++;
    if (visited > 400000) break;
    if (o instanceof Map) {
      add(path, o.size); let i = 0;
      for (const [k, v] of o) { if (i++ > 20000) break; stack.push([v, path + '[*]', depth + 1]); if (typeof k === 'object') stack.push([k, path + '{k}', depth + 1]); }
    } else if (o instanceof Set || o instanceof WeakSet) {
      if (o instanceof Set) { add(path, o.size); let i = 0; for (const v of o) { if (i++ > 20000) break; stack.push([v, path + '[*]', depth + 1]); } }
    } else if (Array.isArray(o)) {
      add(path, o.length); for (let i = 0; i < Math.min(o.length, 20000); i++) stack.push([o[i], path + '[]', depth + 1]);
    } else {
      for (const k of Object.keys(o)) { let v; try { v = o[k]; } catch { continue; } if (v && typeof v === 'object') stack.push([v, path + '.' + k, depth + 1]); }
    }
  }
  const out = {}; for (const [k, v] of [...sizes].sort()) out[k] = v; out.__visited = visited; return out;
}
const gc = globalThis.gc ?? (() => { v8.setFlagsFromString('--expose_gc'); return vm.runInNewContext('gc'); })();
const port = Number(process.env.SOAK_CENSUS_PORT ?? 15558);
http.createServer((req, res) => {
  try {
    if (req.url === '/gc') { gc(); gc(); const m = process.memoryUsage(); res.end(JSON.stringify({ ...m, handles: process._getActiveHandles().length, resources: process.getActiveResourcesInfo().reduce((a, r) => (a[r] = (a[r] ?? 0) + 1, a), {}) })); return; }
    if (req.url === '/census') { res.setHeader('content-type', 'application/json'); res.end(JSON.stringify(census())); return; }
    res.statusCode = 404; res.end();
  } catch (e) { res.statusCode = 500; res.end(String(e?.stack ?? e)); }
}).listen(port, '127.0.0.1').unref();
