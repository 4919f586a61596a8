// MCP over stdio with the official TypeScript SDK client, against the built
// binary (docs/operations.md, docs/serving.md).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { makeVault, stdioClient, call, golden, exerciseEveryTool, TOOLS } from './lib.mjs';

let vault, client, tools;
const has = (name) => tools.some((t) => t.name === name);

before(async () => {
  vault = makeVault();
  client = await stdioClient(vault);
  tools = (await client.listTools()).tools;
});

after(async () => {
  await client?.close();
});

test('stdio lists exactly the tools of the operation table', () => {
  const want = Object.keys(golden().tools).sort();
  assert.deepEqual(tools.map((t) => t.name).sort(), want);
});

test('every tool of the table is served over stdio', () => {
  const missing = TOOLS.filter((n) => !has(n));
  assert.deepEqual(missing, [], `missing tools: ${missing.join(', ')}`);
  assert.equal(tools.length, TOOLS.length);
});

test('annotations follow access; schemas are strict and declare no caps', () => {
  const access = golden().tools;
  for (const t of tools) {
    const write = access[t.name] === 'write';
    assert.equal(t.annotations?.readOnlyHint, !write, `${t.name} readOnlyHint`);
    assert.equal(t.inputSchema.type, 'object');
    assert.equal(t.inputSchema.additionalProperties, false, `${t.name} schema must be strict`);
    const s = JSON.stringify(t.inputSchema);
    assert.ok(!s.includes('"maximum"'), `${t.name}: a declared maximum would make clients refuse values the server clamps`);
    assert.ok(t.description.length > 10);
  }
});

test('get_graph_neighborhood(depth=5) is clamped to 2', async () => {
  const r = await call(client, 'get_graph_neighborhood', { title: 'Home', depth: 5 });
  assert.equal(r.isError, false, r.text);
  assert.equal(r.data.depth, 2);
  assert.equal(r.structured.depth, 2);
  assert.ok(r.data.nodes.some((n) => n.hop === 2));
});

test('unknown parameters are rejected, naming them', async () => {
  const r = await call(client, 'get_page', { title: 'Home', titel: 'x' });
  assert.equal(r.isError, true);
  assert.equal(r.data.code, 'invalid');
  assert.match(r.data.error, /^invalid: unknown parameter "titel"/);
});

test('errors are tool results with the code', async () => {
  const r = await call(client, 'get_page', { title: 'No Such Page Anywhere' });
  assert.equal(r.isError, true);
  assert.equal(r.data.code, 'not_found');
  assert.match(r.data.error, /^not_found: no page titled "No Such Page Anywhere"/);
});

test('get_page returns structured content and the same JSON as text', async () => {
  const r = await call(client, 'get_page', { title: 'start here' });
  assert.equal(r.isError, false, r.text);
  assert.equal(r.data.title, 'Home');
  assert.deepEqual(r.structured, r.data);
  assert.match(r.data.sha256, /^[0-9a-f]{64}$/);
});

test('trigger_source_rescan returns a scan report', async () => {
  const r = await call(client, 'trigger_source_rescan');
  assert.equal(r.isError, false, r.text);
  for (const k of ['scanned', 'new', 'changed', 'deleted', 'unchanged', 'duration_ms']) {
    assert.ok(k in r.data, `report lacks ${k}: ${r.text}`);
  }
  assert.ok(r.data.scanned > 170);
});

test('read_source_file: escapes return an error and no bytes', async (t) => {
  if (!has('read_source_file')) return t.skip('read_source_file is not in this build');
  const ok = await call(client, 'read_source_file', { path: 'note.md' });
  assert.equal(ok.isError, false, ok.text);
  assert.match(ok.data.content, /Source text/);
  for (const path of [
    '../wiki/index.md',
    'raw/sources/../../wiki/index.md',
    join(vault, 'wiki', 'index.md'),
    'escape.md', // symlink to ../../wiki/index.md
    'note.md\u0000.txt',
  ]) {
    const r = await call(client, 'read_source_file', { path });
    assert.equal(r.isError, true, `${JSON.stringify(path)} was read: ${r.text}`);
    assert.ok(!r.text.includes('SECRET-INDEX-MARKER'), `${JSON.stringify(path)} leaked bytes`);
    assert.ok(!('content' in r.data));
  }
});

// write_page with many dangling links files one missing-page review each.
// ensureReviews files at least n missing-page items: one write files at
// most 50 (the rest of its dangling links wait for lint), so the links are
// spread over pages of 50.
async function ensureReviews(n) {
  for (let start = 0, page = 0; start < n; start += 50, page++) {
    const links = Array.from({ length: Math.min(50, n - start) }, (_, i) => `[[Missing topic ${start + i}]]`).join('\n');
    const title = page === 0 ? 'E2E review seed' : `E2E review seed ${page}`;
    const r = await call(client, 'write_page', { title, content: `Seeds reviews.\n\n${links}\n` });
    assert.equal(r.isError, false, r.text);
  }
}

test('list_reviews(limit=999) is clamped to 100', async (t) => {
  if (!has('list_reviews') || !has('write_page')) return t.skip('list_reviews or write_page is not in this build');
  await ensureReviews(120);
  const r = await call(client, 'list_reviews', { limit: 999 });
  assert.equal(r.isError, false, r.text);
  assert.ok(r.data.total >= 120, `total ${r.data.total}`);
  assert.equal(r.data.items.length, 100);
});

test('resolve_review on a terminal item is refused', async (t) => {
  if (!has('resolve_review') || !has('list_reviews') || !has('write_page')) return t.skip('review tools are not in this build');
  await ensureReviews(3);
  const list = await call(client, 'list_reviews', { limit: 1 });
  const id = list.data.items[0].id;
  const first = await call(client, 'resolve_review', { id, action: 'dismiss' });
  assert.equal(first.isError, false, first.text);
  const again = await call(client, 'resolve_review', { id, action: 'skip' });
  assert.equal(again.isError, true, again.text);
  assert.equal(again.data.code, 'conflict');
  assert.match(again.data.error, /dismissed/);
});

test('every tool returns structuredContent that validates against its outputSchema', async () => {
  const called = await exerciseEveryTool(client, { write: true, tag: 'stdio' });
  assert.deepEqual(called, TOOLS);
});

test('tools have titles, and annotations say what they do', () => {
  for (const t of tools) {
    assert.ok(t.title, `${t.name} has no title`);
    assert.equal(t.annotations.openWorldHint, t.name === 'resolve_review', `${t.name} openWorldHint`);
  }
});

test('every accepted parameter is in the schema: list_pages offset/tag, list_reviews type/offset', async () => {
  const by = Object.fromEntries(tools.map((t) => [t.name, t.inputSchema.properties]));
  for (const p of ['offset', 'tag', 'type', 'limit']) assert.ok(by.list_pages[p], `list_pages ${p}`);
  for (const p of ['offset', 'type', 'status', 'limit']) assert.ok(by.list_reviews[p], `list_reviews ${p}`);
  const r = await call(client, 'write_page', { title: 'Hidden tags', content: 'x', tags: ['a'] });
  assert.equal(r.isError, true);
  assert.match(r.data.error, /unknown parameter "tags" \(give it inside frontmatter/);
});

test('error results carry no structuredContent (it would have to match the success schema)', async () => {
  const res = await client.callTool({ name: 'get_page', arguments: { title: 'No Such Page Anywhere' } });
  assert.equal(res.isError, true);
  assert.equal(res.structuredContent, undefined);
});
