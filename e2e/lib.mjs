// Helpers for the end-to-end tests: a vault built with the real binary,
// servers started as subprocesses, and clients from the official MCP
// TypeScript SDK.
import { spawn, execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync, symlinkSync, cpSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
export const BIN = resolve(process.env.SYNAPSE_BIN || join(ROOT, 'bin', 'synapse'));

// The surface pinned by testdata/surface.golden (generated from the
// operation table by `go test -run TestSurface_Golden -update`): the MCP
// tools with their access, and the REST routes.
export function golden() {
  const text = readFileSync(join(ROOT, 'testdata', 'surface.golden'), 'utf8');
  const tools = {};
  const routes = [];
  for (const line of text.split('\n')) {
    let m = line.match(/^tool (\S+) (read|write)$/);
    if (m) tools[m[1]] = m[2];
    m = line.match(/^route (GET|POST|PUT|PATCH|DELETE) (\S+)  op=/);
    if (m) routes.push({ method: m[1], path: m[2] });
  }
  return { tools, routes };
}

// The MCP tools of the operation table, and those of them that write.
export const TOOLS = Object.keys(golden().tools).sort();
export const WRITE_TOOLS = TOOLS.filter((n) => golden().tools[n] === 'write');

export function synapse(args, opts = {}) {
  return execFileSync(BIN, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], ...opts });
}

// A vault with the Obsidian Help corpus, a text source, a symlink out of
// raw/sources/ and a page that marks wiki/index.md content.
export function makeVault() {
  const dir = join(mkdtempSync(join(tmpdir(), 'synapse-e2e-')), 'vault');
  synapse(['init', dir]);
  cpSync(join(ROOT, 'testdata', 'obsidian-help-en'), join(dir, 'wiki'), { recursive: true });
  writeFileSync(join(dir, 'raw', 'sources', 'note.md'), '# A source\n\nSource text.\n');
  writeFileSync(join(dir, 'wiki', 'index.md'), '# Index\n\nSECRET-INDEX-MARKER\n');
  symlinkSync(join('..', '..', 'wiki', 'index.md'), join(dir, 'raw', 'sources', 'escape.md'));
  synapse(['--vault', dir, 'reindex']);
  return dir;
}

export async function connect(transport) {
  const client = new Client({ name: 'synapse-e2e', version: '1.0.0' });
  await client.connect(transport);
  return client;
}

export async function stdioClient(vault, extra = []) {
  const transport = new StdioClientTransport({
    command: BIN,
    args: ['--vault', vault, 'serve', '--mcp-stdio', ...extra],
    stderr: 'pipe',
  });
  return connect(transport);
}

export async function httpClient(url, token) {
  const transport = new StreamableHTTPClientTransport(new URL('/mcp', url), {
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
  });
  return connect(transport);
}

// Starts `synapse serve --http` on a free loopback port; resolves once it
// listens. stop() sends SIGTERM and resolves with { code, stderr }. A null
// token leaves $SYNAPSE_TOKEN unset (the token comes from .synapse/token);
// env adds variables.
export function startHTTP(vault, { write = false, token = 'e2e-token-' + process.pid, env = {} } = {}) {
  const args = ['--vault', vault, 'serve', '--http', '--addr', '127.0.0.1:0'];
  if (write) args.push('--write');
  const procEnv = { ...process.env, ...env, SYNAPSE_TOKEN: token };
  if (token === null) delete procEnv.SYNAPSE_TOKEN;
  const proc = spawn(BIN, args, {
    env: procEnv,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  const exited = new Promise((res) => proc.on('exit', (code, signal) => res({ code, signal })));
  return new Promise((res, rej) => {
    const timer = setTimeout(() => rej(new Error('server did not start: ' + stderr)), 20000);
    proc.stderr.on('data', (d) => {
      stderr += d;
      const m = stderr.match(/serving (http:\/\/127\.0\.0\.1:\d+)/);
      if (m && timer) {
        clearTimeout(timer);
        res({
          url: m[1],
          token,
          proc,
          stderr: () => stderr,
          async stop() {
            proc.kill('SIGTERM');
            const r = await exited;
            return { ...r, stderr };
          },
        });
      }
    });
    proc.on('exit', () => rej(new Error('server exited: ' + stderr)));
  });
}

// callTool returns { isError, data } where data is the parsed JSON text
// (the structured result, or the {error, code} of an error result).
export async function call(client, name, args = {}) {
  const res = await client.callTool({ name, arguments: args });
  const text = res.content?.[0]?.text ?? '';
  let data;
  try {
    data = JSON.parse(text);
  } catch {
    data = { unparsed: text };
  }
  return { isError: !!res.isError, data, structured: res.structuredContent, text };
}

export async function rest(server, method, path, { body, token = server.token, headers = {} } = {}) {
  const h = { ...headers };
  if (token !== null) h.Authorization = `Bearer ${token}`;
  if (body !== undefined) h['Content-Type'] = 'application/json';
  const res = await fetch(server.url + path, {
    method,
    headers: h,
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await res.text();
  let json;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, headers: res.headers, text, json };
}

// exerciseEveryTool lists the tools and calls each one (the write tools
// too when write), validating every structuredContent against its tool's
// outputSchema with Ajv — on top of the SDK's own check, which throws on
// a mismatch. A tool it has no arguments for (a row added to the table
// since) is called without any: it must answer, or refuse them as invalid.
// Returns the names of the tools it called.
export async function exerciseEveryTool(client, { write, tag }) {
  const { default: Ajv } = await import('ajv');
  const ajv = new Ajv({ strict: false, allErrors: true });
  const tools = (await client.listTools()).tools;
  const validators = {};
  for (const t of tools) {
    if (!t.title) throw new Error(`${t.name} has no title`);
    if (!t.outputSchema || t.outputSchema.type !== 'object') throw new Error(`${t.name} has no object outputSchema`);
    validators[t.name] = ajv.compile(t.outputSchema);
  }
  const called = new Set();
  const callChecked = async (name, args) => {
    const res = await client.callTool({ name, arguments: args });
    if (res.isError) throw new Error(`${name} ${JSON.stringify(args)}: ${res.content?.[0]?.text}`);
    if (!res.structuredContent) throw new Error(`${name}: no structuredContent`);
    if (!validators[name](res.structuredContent)) {
      throw new Error(`${name}: structuredContent does not match outputSchema: ${ajv.errorsText(validators[name].errors)}`);
    }
    if (JSON.stringify(JSON.parse(res.content[0].text)) !== JSON.stringify(res.structuredContent)) {
      throw new Error(`${name}: the text is not the structured content`);
    }
    called.add(name);
    return res.structuredContent;
  };
  await callChecked('search_wiki', { query: 'how do I sync my notes', k: 3 });
  await callChecked('search_wiki', { query: 'zzzz-no-such-word' });
  await callChecked('get_page', { title: 'start here' });
  await callChecked('list_pages', { limit: 3, offset: 2 });
  await callChecked('get_graph_neighborhood', { title: 'Home', depth: 2 });
  await callChecked('read_source_file', { path: 'note.md' });
  await callChecked('list_reviews', { status: 'all', limit: 5 });
  if (write) {
    const w = await callChecked('write_page', {
      title: `Schema page ${tag}`,
      content: `See [[Schema missing ${tag} one]] and [[Schema missing ${tag} two]].\n`,
      frontmatter: { tags: ['e2e'] },
    });
    if (w.dangling.length !== 2) throw new Error(`write_page dangling: ${JSON.stringify(w)}`);
    // the newest items are last (oldest first): page to them with offset
    const { total } = await callChecked('list_reviews', { type: 'missing-page', limit: 1 });
    const list = await callChecked('list_reviews', { type: 'missing-page', limit: 100, offset: Math.max(0, total - 100) });
    const item = list.items.find((i) => i.title === `Schema missing ${tag} one`);
    if (!item) throw new Error('the review write_page filed is not listed');
    const r = await callChecked('resolve_review', { id: item.id, action: 'skip' });
    if (r.status !== 'skipped') throw new Error(`resolve_review: ${JSON.stringify(r)}`);
    await callChecked('trigger_source_rescan', {});
  }
  for (const t of tools) {
    if (called.has(t.name) || (!write && WRITE_TOOLS.includes(t.name))) continue;
    const res = await client.callTool({ name: t.name, arguments: {} });
    if (res.isError && JSON.parse(res.content?.[0]?.text ?? '{}').code === 'invalid') {
      called.add(t.name);
      continue;
    }
    await callChecked(t.name, {});
  }
  return [...called].sort();
}
