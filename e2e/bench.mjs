// Tool-call overhead through the official MCP TypeScript SDK: N sequential
// get_page calls over stdio, over streamable HTTP, and the same read over
// REST, against the built binary. Prints p50/p99 per transport.
//
//   SYNAPSE_BIN=bin/synapse node e2e/bench.mjs [N] [VAULT]
import { makeVault, stdioClient, httpClient, startHTTP, call } from './lib.mjs';

const N = Number(process.argv[2] || 500);
const vault = process.argv[3] || makeVault();

function stats(name, lat) {
  lat.sort((a, b) => a - b);
  const p = (q) => lat[Math.min(lat.length - 1, Math.floor(q * lat.length))].toFixed(3);
  const mean = (lat.reduce((a, b) => a + b, 0) / lat.length).toFixed(3);
  console.log(`${name.padEnd(28)} n=${lat.length} p50 ${p(0.5)} ms  p99 ${p(0.99)} ms  mean ${mean} ms`);
}

async function timed(fn) {
  for (let i = 0; i < 20; i++) await fn(i); // warm-up
  const lat = [];
  for (let i = 0; i < N; i++) {
    const t = process.hrtime.bigint();
    await fn(i);
    lat.push(Number(process.hrtime.bigint() - t) / 1e6);
  }
  return lat;
}

let titles = [];
const check = (r) => {
  if (r.isError) throw new Error(r.text);
};

const stdio = await stdioClient(vault);
// pages to read: about 50 spread over the first 1000 titles
const listed = (await call(stdio, 'list_pages', { limit: 1000 })).data.pages;
const step = Math.max(1, Math.floor(listed.length / 50));
titles = listed.filter((_, j) => j % step === 0).map((p) => p.title);
if (titles.length === 0) throw new Error('the vault has no pages');
stats('MCP stdio get_page', await timed(async (i) => check(await call(stdio, 'get_page', { title: titles[i % titles.length] }))));
stats('MCP stdio list_pages(20)', await timed(async () => check(await call(stdio, 'list_pages', { limit: 20 }))));
await stdio.close();

const server = await startHTTP(vault, { token: 'bench-token' });
const mcp = await httpClient(server.url, server.token);
stats('MCP HTTP get_page', await timed(async (i) => check(await call(mcp, 'get_page', { title: titles[i % titles.length] }))));
stats('MCP HTTP list_pages(20)', await timed(async () => check(await call(mcp, 'list_pages', { limit: 20 }))));
await mcp.close();
const headers = { Authorization: `Bearer ${server.token}` };
stats('REST GET /pages/{title}', await timed(async (i) => {
  const res = await fetch(`${server.url}/pages/${encodeURIComponent(titles[i % titles.length])}`, { headers });
  await res.text();
  if (res.status !== 200) throw new Error(String(res.status));
}));
await server.stop();
