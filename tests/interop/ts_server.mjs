// The official MCP TypeScript SDK's Streamable HTTP server (v2, `@modelcontextprotocol/server`,
// both eras through `createMcpHandler`) serving what `benches/http.rs` asks promptshelf for:
// one prompt with an argument that completes, and one text document. The bench passes the
// same content it gave promptshelf, so both do the same work.
//
// Usage: node ts_server.mjs CONTENT.json
//   CONTENT.json: {"prompt": NAME, "argument": ARG, "text": TEMPLATE (ARG substituted for
//   "{{ ARG }}"), "completion": [VALUES], "uri": URI, "mimeType": MIME, "document": TEXT}
// Prints `listening on http://127.0.0.1:PORT/mcp` once it listens; serves until killed.

import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { McpServer, createMcpHandler, completable } from '@modelcontextprotocol/server';
import { z } from 'zod';

const content = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const placeholder = `{{ ${content.argument} }}`;

function factory() {
  const server = new McpServer({ name: 'ts-sdk-bench', version: '0' });
  server.registerPrompt(
    content.prompt,
    {
      description: 'The bench prompt',
      argsSchema: z.object({
        [content.argument]: completable(z.string(), (value) =>
          content.completion.filter((candidate) => candidate.startsWith(value))
        )
      })
    },
    (args) => ({
      messages: [
        {
          role: 'user',
          content: { type: 'text', text: content.text.split(placeholder).join(args[content.argument]) }
        }
      ]
    })
  );
  server.registerResource('document', content.uri, { mimeType: content.mimeType }, (uri) => ({
    contents: [{ uri: uri.href, mimeType: content.mimeType, text: content.document }]
  }));
  return server;
}

const handler = createMcpHandler(factory, { responseMode: 'json' });

// Node's http server in front of the web-standard handler: the whole body is read, and the
// answer written with a Content-Length, as promptshelf answers.
const http = createServer(async (req, res) => {
  const chunks = [];
  for await (const chunk of req) chunks.push(chunk);
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (typeof value === 'string') headers.set(name, value);
  }
  const request = new Request(`http://${req.headers.host}${req.url}`, {
    method: req.method,
    headers,
    body: req.method === 'POST' ? Buffer.concat(chunks) : undefined
  });
  const response = await handler.fetch(request);
  const body = Buffer.from(await response.arrayBuffer());
  const out = {};
  response.headers.forEach((value, name) => {
    out[name] = value;
  });
  out['content-length'] = String(body.length);
  delete out['transfer-encoding'];
  res.writeHead(response.status, out);
  res.end(body);
});
http.keepAliveTimeout = 60000;
http.listen(0, '127.0.0.1', () => {
  console.log(`listening on http://127.0.0.1:${http.address().port}/mcp`);
});
