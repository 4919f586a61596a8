// MCP streamable HTTP with the official TypeScript SDK client, and REST
// with real requests, against the built binary (docs/operations.md, docs/serving.md).
import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { makeVault, startHTTP, httpClient, call, rest, golden, exerciseEveryTool, TOOLS, WRITE_TOOLS } from './lib.mjs';

const table = golden();
const readTools = Object.keys(table.tools).filter((n) => table.tools[n] === 'read').sort();
const allTools = Object.keys(table.tools).sort();
const hasRoute = (method, path) => table.routes.some((r) => r.method === method && r.path === path);

let vault, ro, rw;

before(async () => {
  vault = makeVault();
  ro = await startHTTP(vault, { write: false, token: 'e2e-ro-token' });
  // a second server may not take the store: test the read-write one after
  // stopping the read-only one (see the "with --write" suite)
});

after(async () => {
  await ro?.stop();
  await rw?.stop();
});

describe('HTTP without --write', () => {
  let client;
  before(async () => {
    client = await httpClient(ro.url, ro.token);
  });
  after(async () => client?.close());

  test('lists exactly the read tools', async () => {
    const names = (await client.listTools()).tools.map((t) => t.name).sort();
    assert.deepEqual(names, readTools);
    for (const w of WRITE_TOOLS) assert.ok(!names.includes(w), `${w} is listed`);
  });

  test('refuses a call to any write tool sent anyway', async () => {
    const args = {
      write_page: { title: 'Nope', content: 'x' },
      resolve_review: { id: 'abc', action: 'dismiss' },
      trigger_source_rescan: {},
    };
    for (const name of WRITE_TOOLS) {
      let r;
      try {
        r = await call(client, name, args[name] ?? {});
      } catch (e) {
        // a tool not in this build's table is unknown: refused too
        assert.ok(!table.tools[name], `${name}: ${e}`);
        continue;
      }
      assert.equal(r.isError, true, `${name} ran over read-only HTTP: ${r.text}`);
      assert.equal(r.data.code, 'forbidden');
      assert.match(r.data.error, /--write/);
    }
  });

  test('every read tool returns structuredContent that validates against its outputSchema', async () => {
    const called = await exerciseEveryTool(client, { write: false, tag: 'ro' });
    assert.deepEqual(called, readTools);
  });

  test('sessions are real: unknown id 404, no id 400, DELETE ends one', async () => {
    const post = (session, body) => rest(ro, 'POST', '/mcp', {
      body,
      headers: { Accept: 'application/json, text/event-stream', ...(session ? { 'Mcp-Session-Id': session } : {}) },
    });
    const list = { jsonrpc: '2.0', id: 2, method: 'tools/list' };
    assert.equal((await post(undefined, list)).status, 400);
    assert.equal((await post('0123456789abcdef0123456789abcdef', list)).status, 404);
    const init = await post(undefined, { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } });
    assert.equal(init.status, 200, init.text);
    const sid = init.headers.get('mcp-session-id');
    assert.match(sid, /^[0-9a-f]{32}$/);
    assert.equal((await post(sid, list)).status, 200);
    const del = await rest(ro, 'DELETE', '/mcp', { headers: { 'Mcp-Session-Id': sid } });
    assert.equal(del.status, 204);
    assert.equal((await post(sid, list)).status, 404);
    // the SDK client ends its session the same way
    const t = client.transport;
    const before = t.sessionId;
    assert.ok(before);
    await t.terminateSession();
    assert.equal((await post(before, list)).status, 404);
    client = await httpClient(ro.url, ro.token);
  });

  test('read tools work and clamp', async () => {
    const r = await call(client, 'get_graph_neighborhood', { title: 'Home', depth: 5 });
    assert.equal(r.isError, false, r.text);
    assert.equal(r.data.depth, 2);
  });

  test('REST: no token and wrong token are 401 with WWW-Authenticate', async () => {
    for (const token of [null, 'wrong']) {
      const r = await rest(ro, 'GET', '/pages', { token });
      assert.equal(r.status, 401);
      assert.match(r.headers.get('www-authenticate'), /^Bearer/);
      assert.equal(r.json.error.code, 'unauthorized'); // not forbidden (403): the token is what is wrong
      assert.ok(!r.text.includes(ro.token));
    }
    const mcp = await rest(ro, 'POST', '/mcp', { token: null, body: {} });
    assert.equal(mcp.status, 401);
    const health = await rest(ro, 'GET', '/healthz', { token: null });
    assert.equal(health.status, 200);
  });

  test('MCP: a wrong token is reported as such by a client that can do OAuth (Inspector, mcp-remote)', async () => {
    // the client the Inspector and mcp-remote build: the SDK's transport
    // with an OAuth provider, and a bearer header the user configured
    let redirected = false;
    const provider = {
      get redirectUrl() { return 'http://127.0.0.1:1/callback'; },
      get clientMetadata() { return { client_name: 'e2e', redirect_uris: ['http://127.0.0.1:1/callback'] }; },
      clientInformation: () => undefined,
      saveClientInformation: () => {},
      tokens: () => undefined,
      saveTokens: () => {},
      redirectToAuthorization: () => { redirected = true; },
      saveCodeVerifier: () => {},
      codeVerifier: () => 'v',
    };
    const transport = new StreamableHTTPClientTransport(new URL('/mcp', ro.url), {
      authProvider: provider,
      requestInit: { headers: { Authorization: 'Bearer not-the-token' } },
    });
    const c = new Client({ name: 'e2e-oauth', version: '1.0.0' });
    await assert.rejects(c.connect(transport), (err) => {
      // before: "HTTP 401: Invalid OAuth error response: …" (a schema dump)
      const msg = String(err?.message ?? err);
      assert.match(msg, /static bearer token, not OAuth/);
      assert.match(msg, /\.synapse\/token/);
      return true;
    });
    assert.equal(redirected, false, 'the client was sent to an OAuth login');
  });

  test('REST: a write route is 403 saying how to enable writes', async () => {
    const r = await rest(ro, 'POST', '/sources/rescan');
    assert.equal(r.status, 403);
    assert.equal(r.json.error.code, 'forbidden');
    assert.match(r.json.error.message, /synapse serve --http --write/);
  });

  test('REST: unknown query parameters are 400 naming them', async () => {
    const r = await rest(ro, 'GET', '/pages?limit=2&colour=red');
    assert.equal(r.status, 400);
    assert.match(r.json.error.message, /unknown query parameter "colour"/);
  });

  test('REST: GET /pages/{title} and the clamp', async () => {
    const page = await rest(ro, 'GET', '/pages/' + encodeURIComponent('start here'));
    assert.equal(page.status, 200);
    assert.equal(page.json.title, 'Home');
    const list = await rest(ro, 'GET', '/pages?limit=5000');
    assert.equal(list.status, 200);
    assert.equal(list.json.pages.length, 173);
  });

  test('a foreign Host header is refused (DNS rebinding)', async () => {
    const u = new URL(ro.url);
    const status = await new Promise((res, rej) => {
      const req = http.request({ host: u.hostname, port: u.port, path: '/pages', headers: { Host: 'evil.example:7411', Authorization: `Bearer ${ro.token}` } }, (r) => {
        r.resume();
        res(r.statusCode);
      });
      req.on('error', rej);
      req.end();
    });
    assert.equal(status, 403);
  });

  test('/openapi.json lists every route of the table', async () => {
    const r = await rest(ro, 'GET', '/openapi.json');
    assert.equal(r.status, 200);
    assert.equal(r.json.openapi, '3.1.0');
    for (const { method, path } of table.routes) {
      assert.ok(r.json.paths[path]?.[method.toLowerCase()], `${method} ${path} missing`);
    }
    assert.ok(r.json.paths['/healthz']);
  });

  test('/openapi.json has POST /review/queue/bulk-resolve and PATCH /review/queue/{id}', async () => {
    const r = await rest(ro, 'GET', '/openapi.json');
    assert.ok(r.json.paths['/review/queue/bulk-resolve']?.post, 'POST /review/queue/bulk-resolve missing');
    assert.ok(r.json.paths['/review/queue/{id}']?.patch, 'PATCH /review/queue/{id} missing');
  });
});

describe('HTTP with --write', () => {
  let client;
  before(async () => {
    const r = await ro.stop();
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /stopped/);
    ro = undefined;
    rw = await startHTTP(vault, { write: true, token: 'e2e-rw-token' });
    client = await httpClient(rw.url, rw.token);
  });
  after(async () => client?.close());

  test('lists every tool', async () => {
    const names = (await client.listTools()).tools.map((t) => t.name).sort();
    assert.deepEqual(names, allTools);
  });

  test('every tool returns structuredContent that validates against its outputSchema', async () => {
    const called = await exerciseEveryTool(client, { write: true, tag: 'rw' });
    assert.deepEqual(called, TOOLS);
  });

  test('trigger_source_rescan returns a scan report', async () => {
    const r = await call(client, 'trigger_source_rescan');
    assert.equal(r.isError, false, r.text);
    assert.ok(r.data.scanned > 170);
    const viaRest = await rest(rw, 'POST', '/sources/rescan');
    assert.equal(viaRest.status, 200);
    assert.ok('unchanged' in viaRest.json);
  });

  // review items to act on: a page with dangling links files them
  async function seedReviews(n) {
    const links = Array.from({ length: n }, (_, i) => `[[HTTP missing ${i}]]`).join(' ');
    const r = await rest(rw, 'PUT', '/pages/' + encodeURIComponent('HTTP review seed'), { body: { content: `Seeds. ${links}` } });
    // 201 when the page is new, 200 when an earlier call created it
    assert.equal(r.status, r.json.created ? 201 : 200, r.text);
    const list = await rest(rw, 'GET', '/review/queue?limit=100');
    assert.equal(list.status, 200, list.text);
    return list.json.items.map((i) => i.id);
  }

  test('bulk-resolve with 201 ids is 422 and changes nothing', async (t) => {
    if (!hasRoute('POST', '/review/queue/bulk-resolve') || !hasRoute('PUT', '/pages/{title}')) return t.skip('bulk-resolve or PUT /pages is not in this build');
    const ids = await seedReviews(3);
    // 201 distinct ids, the real ones first: a cap checked after
    // de-duplication or lookup would still see 201
    const many = [...ids, ...Array.from({ length: 201 - ids.length }, (_, i) => `nosuch${i}`)];
    const r = await rest(rw, 'POST', '/review/queue/bulk-resolve', { body: { ids: many, action: 'dismiss' } });
    assert.equal(r.status, 422, r.text);
    const after = await rest(rw, 'GET', '/review/queue?limit=100');
    for (const id of ids) assert.ok(after.json.items.some((i) => i.id === id), `${id} changed`);
  });

  test('bulk (UI) with 201 ids is 400', async (t) => {
    if (!hasRoute('POST', '/review/queue/bulk')) return t.skip('POST /review/queue/bulk is not in this build');
    const many = Array.from({ length: 201 }, (_, i) => `id${i}`);
    const r = await rest(rw, 'POST', '/review/queue/bulk', { body: { ids: many, action: 'skip' } });
    assert.equal(r.status, 400, r.text);
  });

  test('PATCH /review/queue/{id} works, then 409 on the terminal item', async (t) => {
    if (!hasRoute('PATCH', '/review/queue/{id}') || !hasRoute('PUT', '/pages/{title}')) return t.skip('PATCH /review/queue/{id} is not in this build');
    const [id] = await seedReviews(2);
    const ok = await rest(rw, 'PATCH', `/review/queue/${id}`, { body: { action: 'skip' } });
    assert.equal(ok.status, 200, ok.text);
    const again = await rest(rw, 'PATCH', `/review/queue/${id}`, { body: { status: 'dismissed' } });
    assert.equal(again.status, 409, again.text);
    assert.equal(again.json.error.code, 'conflict');
    assert.match(again.json.error.message, /skipped/);
  });

  test('SIGTERM shuts down cleanly', async () => {
    await client.close();
    client = undefined;
    const r = await rw.stop();
    rw = undefined;
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /shutting down[\s\S]*stopped/);
  });
});
