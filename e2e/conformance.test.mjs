// The protocol cases of the audit of a vault from anywhere, replayed with
// real clients against the built binary: the official MCP TypeScript SDK,
// raw HTTP requests (what curl sends, byte for byte) and the CLI. The MCP
// Inspector CLI's side of the same cases is in scripts/e2e.
// docs/serving.md and docs/security.md say what each answer is and why.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync, chmodSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { BIN, synapse, call, startHTTP } from './lib.mjs';

const SHIPPED = 'a-token-shipped-with-the-vault-0123456789';
let work, vault, server, token;

// serve starts `synapse serve --http --write` without $SYNAPSE_TOKEN, so
// that the token comes from .synapse/token, with a config folder of its
// own (where serve records the tokens it made).
function serve() {
  return startHTTP(vault, { write: true, token: null, env: { XDG_CONFIG_HOME: join(work, 'config') } });
}

// raw sends a request exactly as given (the path is not normalized, the
// body is bytes), as curl does.
function raw(method, path, { body, headers = {} } = {}) {
  const u = new URL(server.url);
  return new Promise((res, rej) => {
    const req = http.request({ host: u.hostname, port: u.port, method, path, headers }, (r) => {
      const chunks = [];
      r.on('data', (c) => chunks.push(c));
      r.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let json;
        try {
          json = JSON.parse(text);
        } catch {
          json = undefined;
        }
        res({ status: r.statusCode, headers: r.headers, text, json });
      });
    });
    req.on('error', rej);
    if (body !== undefined) req.write(body);
    req.end();
  });
}

const auth = (t = token) => ({ Authorization: `Bearer ${t}` });
const mcpHeaders = (t = token, session) => ({
  ...auth(t),
  'Content-Type': 'application/json',
  Accept: 'application/json, text/event-stream',
  ...(session ? { 'Mcp-Session-Id': session } : {}),
});

async function sdkClient(t) {
  const c = new Client({ name: 'synapse-conformance', version: '1.0.0' });
  await c.connect(new StreamableHTTPClientTransport(new URL('/mcp', server.url), { requestInit: { headers: auth(t) } }));
  return c;
}

// rpc opens a session over raw HTTP and sends one more JSON-RPC body in it.
async function rpc(body) {
  const init = await raw('POST', '/mcp', {
    headers: mcpHeaders(),
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } }),
  });
  assert.equal(init.status, 200, init.text);
  const session = init.headers['mcp-session-id'];
  await raw('POST', '/mcp', { headers: mcpHeaders(token, session), body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }) });
  return raw('POST', '/mcp', { headers: mcpHeaders(token, session), body });
}

before(async () => {
  work = mkdtempSync(join(tmpdir(), 'synapse-conformance-'));
  vault = join(work, 'vault');
  synapse(['init', vault]);
  writeFileSync(join(vault, 'wiki', 'Home.md'), '# Home\n\nThe zebu page.\n');
  synapse(['--vault', vault, 'reindex']);
  // a token that came with the vault (a clone), already private
  writeFileSync(join(vault, '.synapse', 'token'), SHIPPED + '\n');
  chmodSync(join(vault, '.synapse', 'token'), 0o600);
  server = await serve();
  token = readFileSync(join(vault, '.synapse', 'token'), 'utf8').trim();
});

after(async () => {
  await server?.stop();
});

test('a shipped .synapse/token (mode 0600) is replaced: the SDK is refused with it and served with the new one', async () => {
  assert.notEqual(token, SHIPPED, 'the shipped token was kept');
  assert.match(server.stderr(), /replaced the token file/);
  await assert.rejects(sdkClient(SHIPPED), (err) => {
    assert.match(String(err.message), /wrong bearer token/);
    return true;
  });
  const c = await sdkClient(token);
  assert.ok((await c.listTools()).tools.length > 0);
  await c.close();
});

test('a wrong token: the SDK is told the token is wrong, and the OAuth documents it would try say so too', async () => {
  await assert.rejects(sdkClient('wrong'), (err) => {
    assert.equal(err.code, 401);
    assert.match(String(err.message), /wrong bearer token/);
    return true;
  });
  const r = await raw('POST', '/mcp', { headers: mcpHeaders('wrong'), body: '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}' });
  assert.equal(r.status, 401);
  const challenge = r.headers['www-authenticate'];
  assert.match(challenge, /^Bearer /);
  assert.match(challenge, /error="invalid_token"/);
  const meta = challenge.match(/resource_metadata="([^"]+)"/);
  assert.ok(meta, `no resource_metadata in ${challenge}`);
  // the protected-resource metadata (RFC 9728) names no authorization server
  const prm = await raw('GET', new URL(meta[1]).pathname);
  assert.equal(prm.status, 200, prm.text);
  assert.equal(prm.json.resource, server.url + '/mcp');
  assert.equal(prm.json.authorization_servers, undefined);
  assert.match(prm.json.resource_name, /static bearer token, not OAuth/);
  // the registration a client tries next is an OAuth error with the reason
  const reg = await raw('POST', '/register', {
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ redirect_uris: ['http://127.0.0.1:1/cb'] }),
  });
  assert.equal(reg.status, 400);
  assert.equal(reg.json.error, 'invalid_request');
  assert.match(reg.json.error_description, /\.synapse\/token/);
  const as = await raw('GET', '/.well-known/oauth-authorization-server');
  assert.equal(as.status, 404);
  assert.match(as.headers['content-type'], /^application\/json/);
});

test('GET /pages/%ZZ (a malformed escape) is a JSON error, not text/plain', async () => {
  const r = await raw('GET', '/pages/%ZZ', { headers: auth() });
  assert.equal(r.status, 400);
  assert.match(r.headers['content-type'], /^application\/json/);
  assert.equal(r.json.error.code, 'invalid');
  assert.match(r.json.error.message, /%XX/);
});

test('text that is not UTF-8 is refused over MCP and REST, never written as U+FFFD', async () => {
  const c = await sdkClient(token);
  // what a JavaScript client can send that is no UTF-8: a lone surrogate
  const r = await call(c, 'write_page', { title: 'Surrogate', content: 'half a pair \ud800 here\n' });
  assert.equal(r.isError, true, r.text);
  assert.equal(r.data.code, 'invalid');
  assert.match(r.data.error, /surrogate/);
  await c.close();
  // invalid bytes over JSON-RPC and REST
  const bad = Buffer.from('bad \xff byte\n', 'latin1');
  const body = Buffer.concat([
    Buffer.from('{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"write_page","arguments":{"title":"Bytes MCP","content":"'),
    bad.subarray(0, bad.length - 1),
    Buffer.from('"}}}'),
  ]);
  const m = await rpc(body);
  if (process.env.CONFORMANCE_VERBOSE) console.log(m.status, m.text);
  assert.match(m.text, /UTF-8/, m.text);
  assert.ok(!/"isError":false/.test(m.text), m.text);
  const put = await raw('PUT', '/pages/Bytes%20REST', {
    headers: { ...auth(), 'Content-Type': 'application/json' },
    body: Buffer.concat([Buffer.from('{"content":"'), bad.subarray(0, bad.length - 1), Buffer.from('"}')]),
  });
  assert.equal(put.status, 400, put.text);
  assert.equal(put.json.error.code, 'invalid');
  for (const name of ['surrogate.md', 'bytes-mcp.md', 'bytes-rest.md', 'Surrogate.md', 'Bytes MCP.md', 'Bytes REST.md']) {
    assert.ok(!existsSync(join(vault, 'wiki', name)), `${name} was written`);
  }
  const list = synapse(['--vault', vault, 'page', 'list', '--json']);
  assert.ok(!list.includes('\ufffd'), 'a page holds U+FFFD');
});

test('initialize with empty params answers the newest protocol version; the SDK negotiates it', async () => {
  const r = await raw('POST', '/mcp', { headers: mcpHeaders(), body: '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}' });
  assert.equal(r.status, 200, r.text);
  assert.equal(r.json.result.protocolVersion, '2025-11-25');
  const c = await sdkClient(token);
  assert.equal(c.transport.protocolVersion, '2025-11-25');
  await c.close();
});

test('a cursor the server never issued is -32602 (SDK and raw)', async () => {
  const c = await sdkClient(token);
  await assert.rejects(c.listTools({ cursor: Buffer.from('search_wiki').toString('base64') }), (err) => {
    assert.equal(err.code, -32602);
    assert.match(err.message, /cursor/);
    return true;
  });
  await c.close();
  const r = await rpc('{"jsonrpc":"2.0","id":5,"method":"tools/list","params":{"cursor":"bm90LWlzc3VlZA=="}}');
  assert.equal(r.json?.error?.code, -32602, r.text);
});

test('params given as an array are -32602 (invalid params), not -32600', async () => {
  const r = await rpc('{"jsonrpc":"2.0","id":6,"method":"tools/call","params":["search_wiki",{"query":"zebu"}]}');
  assert.equal(r.json?.error?.code, -32602, r.text);
});

test('page write --file /nonexistent exits 3 (not found), as the help says', () => {
  const missing = join(work, 'no-such-dir', 'nonexistent.md');
  const r = spawnSync(BIN, ['--vault', vault, 'page', 'write', 'From file', '--file', missing], { encoding: 'utf8' });
  assert.equal(r.status, 3, r.stderr);
  assert.match(r.stderr, /nonexistent\.md/);
  const help = synapse(['--help']);
  assert.match(help, /3 {2}not found/);
});
