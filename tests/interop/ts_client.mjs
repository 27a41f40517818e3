// Interoperability check: the official MCP TypeScript SDK drives `promptshelf serve --http`.
//
// Usage: node ts_client.mjs URL TOKEN
//
// Nobody here wrote these clients, so a pass shows that a TypeScript host can use the server
// over Streamable HTTP with a bearer token. Three clients run the same checks on the seed
// library, each on its own connection:
//   [legacy sdk]    @modelcontextprotocol/sdk (v1, the `initialize` handshake only)
//   [legacy client] @modelcontextprotocol/client (v2) left at its default, the handshake
//   [modern client] @modelcontextprotocol/client (v2) pinned to 2026-07-28 (stateless)
// Each uses StreamableHTTPClientTransport, the token going in requestInit.headers.
//
// Prints one line per check ("ok   ..." or "FAIL ...") and ends with
// `ts-interop: N passed, M failed`. Exits 0 only when nothing failed.

import { Client as V1Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as V1Transport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';

const [url, token] = process.argv.slice(2);
if (!url || !token) {
  console.error('usage: node ts_client.mjs URL TOKEN');
  process.exit(2);
}

const GUIDE_URI = 'shelf://library/guides/api-design.md';
const PNG_URI = 'shelf://library/images/layers.png';
const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];
// Long enough for a debug build on a loaded machine; a server that never answers fails.
const TIMEOUT_MS = 20000;

let passed = 0;
let failed = 0;

async function check(name, body) {
  try {
    const detail = await body();
    passed += 1;
    console.log(`ok   ${name}${detail ? ` (${detail})` : ''}`);
  } catch (error) {
    failed += 1;
    console.log(`FAIL ${name}: ${error?.stack ?? error}`);
  }
}

function expect(condition, message) {
  if (!condition) throw new Error(message);
}

/// Every item of a paginated list, following nextCursor (bounded, in case it never ends).
async function listAll(fetchPage, field) {
  const items = [];
  let cursor;
  for (let page = 0; page < 100; page += 1) {
    const result = await fetchPage(cursor === undefined ? undefined : { cursor });
    items.push(...result[field]);
    cursor = result.nextCursor;
    if (cursor === undefined) return items;
  }
  throw new Error(`${field}: still a nextCursor after 100 pages`);
}

async function run(tag, client, transport, version) {
  const options = { timeout: TIMEOUT_MS };
  await check(`${tag} handshake`, async () => {
    await client.connect(transport, options);
    const negotiated = version();
    const server = client.getServerVersion();
    expect(server?.name === 'promptshelf', `serverInfo is ${JSON.stringify(server)}`);
    return `protocol ${negotiated}`;
  });
  await check(`${tag} prompts/list`, async () => {
    const prompts = await listAll((params) => client.listPrompts(params, options), 'prompts');
    const names = prompts.map((prompt) => prompt.name);
    expect(names.includes('summarize'), `no summarize among ${names}`);
    return `${names.length} prompts`;
  });
  await check(`${tag} prompts/get summarize`, async () => {
    const text = 'The quick brown fox jumps over the lazy dog.';
    const result = await client.getPrompt(
      { name: 'summarize', arguments: { text, length: 'short' } },
      options
    );
    expect(result.messages.length > 0, 'no messages');
    const all = JSON.stringify(result.messages);
    expect(all.includes(text), `the text given is not in the messages: ${all}`);
    return `${result.messages.length} messages`;
  });
  await check(`${tag} resources/read text`, async () => {
    const result = await client.readResource({ uri: GUIDE_URI }, options);
    expect(result.contents.length === 1, `${result.contents.length} contents`);
    const [content] = result.contents;
    expect(content.uri === GUIDE_URI, `the contents name ${content.uri}`);
    expect(typeof content.text === 'string' && content.text.includes('HTTP API'), 'no text about HTTP APIs');
    return `${content.text.length} characters`;
  });
  await check(`${tag} resources/read blob`, async () => {
    const result = await client.readResource({ uri: PNG_URI }, options);
    const [content] = result.contents;
    expect(content.mimeType === 'image/png', `mimeType ${content.mimeType}`);
    const bytes = Buffer.from(content.blob, 'base64');
    expect(PNG_SIGNATURE.every((byte, i) => bytes[i] === byte), 'the blob is not a PNG');
    return `${bytes.length} bytes`;
  });
  await check(`${tag} completion/complete code-review language`, async () => {
    const result = await client.complete(
      { ref: { type: 'ref/prompt', name: 'code-review' }, argument: { name: 'language', value: 'py' } },
      options
    );
    expect(result.completion.values.includes('python'), `values ${result.completion.values}`);
    return result.completion.values.join(', ');
  });
  await check(`${tag} resources/templates/list`, async () => {
    const templates = await listAll(
      (params) => client.listResourceTemplates(params, options),
      'resourceTemplates'
    );
    const uris = templates.map((template) => template.uriTemplate);
    expect(uris.includes('shelf://library/{+path}'), `templates ${uris}`);
    return `${uris.length} templates`;
  });
  await client.close();
}

const requestInit = { headers: { Authorization: `Bearer ${token}` } };
const info = { name: 'promptshelf-ts-interop', version: '0' };

const v1 = new V1Client(info, { capabilities: {} });
const v1Transport = new V1Transport(new URL(url), { requestInit });
await run('[legacy sdk]', v1, v1Transport, () => v1Transport.protocolVersion);

const legacy = new Client(info, { capabilities: {} });
await run('[legacy client]', legacy, new StreamableHTTPClientTransport(new URL(url), { requestInit }), () =>
  legacy.getNegotiatedProtocolVersion()
);

const modern = new Client(info, {
  capabilities: {},
  versionNegotiation: { mode: { pin: '2026-07-28' } }
});
await run('[modern client]', modern, new StreamableHTTPClientTransport(new URL(url), { requestInit }), () =>
  modern.getNegotiatedProtocolVersion()
);

console.log(`ts-interop: ${passed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
