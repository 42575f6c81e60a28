// trace_viewer.mjs - does a dlsim trace file load in a real trace viewer?
// Runs it through the trace engine of Chrome DevTools' Performance panel
// (npm: @paulirish/trace_engine, the model behind the panel and Lighthouse)
// and checks that every complete event ("X") of the file became a slice of
// its track and that every track has its name.  `make trace-check` installs
// the package into a cache outside the tree and runs this on 100k devices.
//   node trace_viewer.mjs ENGINE_DIR TRACE.json[.gz]
import fs from 'node:fs';
import zlib from 'node:zlib';

const [engineDir, file] = process.argv.slice(2);
if (!engineDir || !file) {
  console.error('usage: node trace_viewer.mjs ENGINE_DIR TRACE.json[.gz]');
  process.exit(2);
}
const Trace = await import(engineDir + '/models/trace/trace.js');
// the engine needs the browser's DOMRect, as its README says
globalThis.DOMRect ??= class DOMRect {
  constructor(x = 0, y = 0, w = 0, h = 0) {
    Object.assign(this, { x, y, width: w, height: h, top: y, left: x, right: x + w, bottom: y + h });
  }
};
const t0 = Date.now();
const buf = fs.readFileSync(file);
const gz = buf[0] === 0x1f && buf[1] === 0x8b;
const text = (gz ? zlib.gunzipSync(buf) : buf).toString('utf8');
const events = JSON.parse(text).traceEvents;
const t1 = Date.now();
const model = Trace.TraceModel.Model.createWithAllHandlers();
await model.parse(events);
const data = model.parsedTrace().data;
const t2 = Date.now();
const want = events.filter(e => e.ph === 'X').length;
const named = new Set(events.filter(e => e.ph === 'M' && e.name === 'thread_name').map(e => e.tid));
let got = 0, threads = 0, unnamed = 0;
for (const [, proc] of data.Renderer.processes)
  for (const [tid, th] of proc.threads) {
    threads++;
    got += th.entries.length;
    if (!named.has(tid) || !th.name) unnamed++;
  }
console.log(`${file}: ${(buf.length / 1e6).toFixed(1)} MB${gz ? ' gzip' : ''}, ` +
  `${(text.length / 1e6).toFixed(1)} MB JSON, ${events.length} events; read ${t1 - t0} ms, ` +
  `DevTools trace engine ${t2 - t1} ms: ${got} of ${want} slices on ${threads} tracks, ${unnamed} unnamed, ` +
  `rss ${(process.memoryUsage().rss / 1e6).toFixed(0)} MB`);
process.exit(got === want && want > 0 && unnamed === 0 ? 0 : 1);
