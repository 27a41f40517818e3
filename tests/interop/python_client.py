#!/usr/bin/env python3
"""Interoperability check: the official MCP Python SDK (`pip install mcp`) drives `promptshelf serve`.

Nobody here wrote this client, so a pass shows that a real MCP host can use the server: the SDK
spawns `BINARY --db DB serve`, speaks to it over stdio, and validates every result against the
negotiated revision's types before we look at it.

Usage: python_client.py BINARY DB [--era legacy|modern|both] [--http URL [--token TOKEN]]
       python_client.py BINARY DB --provenance PROMPT URI [--http URL [--token TOKEN]]

The server speaks both eras, and so does the SDK, so by default the checks run twice, each time
against a fresh server process on the same database: once after the legacy `initialize`
handshake and once after the modern `server/discover` probe. In each era a second server, with
`serve --tools prompts,resources`, is used through its tools alone.

With `--http URL` the SDK's Streamable HTTP client speaks to a `promptshelf serve --http` already
serving DB at URL instead, and the same checks run in each era over it (the tool mirrors and the
forms, which need servers started with other flags, are left to the stdio runs).

With `--provenance PROMPT URI` it only reads, in each era, where the prompt PROMPT and the
resource URI come from: the `_meta` of a `prompts/get` result and of a `resources/read`
result's contents, as the SDK's own types give them, each printed on a line
`provenance [ERA] METHOD JSON` for the caller to check against the library, and the text of
the prompt's first message as `text [ERA] prompts/get JSON`; with `--http URL` (and `--token`),
from the server at URL instead of one it starts (a token on a release channel reads that
channel).

Prints one line per check ("ok ..." or "FAIL ...") and ends with `interop: N passed, M failed`
(CI reads that shape). Exits 0 only when nothing failed.
"""

from __future__ import annotations

import argparse
import base64
import json
import sys
import tempfile
import time
from pathlib import Path
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

import anyio
from mcp import Client, ClientSession, StdioServerParameters, types
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.client.subscriptions import listen

SEED_PROMPTS = {
    "code-review",
    "explain-code",
    "commit-message",
    "summarize",
    "write-tests",
    "api-design-review",
    "debug-error",
    "architecture-diagram",
}
GUIDE_URI = "shelf://library/guides/api-design.md"
STATUS_CODES_URI = "shelf://library/reference/http-status-codes.txt"
PNG_URI = "shelf://library/images/layers.png"
LIBRARY_TEMPLATE = "shelf://library/{+path}"
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"

# Long enough for a debug build on a loaded CI machine, short enough that a server that never
# answers fails the check instead of hanging the test.
REQUEST_TIMEOUT_SECONDS = 20.0
# How long a change made by another process may take to be notified (the server polls the
# database every 200 ms; the rest is slack for a loaded machine).
NOTIFY_TIMEOUT_SECONDS = 10.0
# A bound on a whole era (spawn, handshake, every check, shutdown).
ERA_TIMEOUT_SECONDS = 120.0

# Revisions in order, so a check can ask "does the negotiated revision define this?".
REVISIONS = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"]

# The `_meta` key under which the server says where an item comes from.
PROVENANCE_KEY = "promptshelf/provenance"


class CheckFailed(Exception):
    """A check saw something other than what the server should have said."""


def expect(condition: object, message: str) -> None:
    if not condition:
        raise CheckFailed(message)


class Report:
    """Runs checks one by one, records each outcome and prints it as it happens."""

    def __init__(self) -> None:
        self.passed = 0
        self.failed: list[str] = []

    async def check(self, name: str, body: Callable[[], Awaitable[str | None]]) -> bool:
        # A failing check is recorded and the next one still runs: one report then shows
        # everything that is wrong instead of only the first problem.
        try:
            detail = await body()
        except Exception as error:  # noqa: BLE001 - every failure, SDK errors included, is a result
            message = f"{type(error).__name__}: {error}"
            self.failed.append(f"{name}: {message}")
            print(f"FAIL {name}: {message}", flush=True)
            return False
        self.passed += 1
        print(f"ok   {name}" + (f" ({detail})" if detail else ""), flush=True)
        return True

    def fail(self, name: str, message: str) -> None:
        self.failed.append(f"{name}: {message}")
        print(f"FAIL {name}: {message}", flush=True)


def at_least(version: str | None, revision: str) -> bool:
    """Whether `version` is `revision` or newer (unknown versions count as older)."""
    if version not in REVISIONS:
        return False
    return REVISIONS.index(version) >= REVISIONS.index(revision)


async def list_all(fetch: Callable[[types.PaginatedRequestParams | None], Awaitable[Any]], field: str) -> list[Any]:
    """Every item of a paginated list, following `nextCursor` (bounded, in case it never ends)."""
    items: list[Any] = []
    cursor: str | None = None
    for _ in range(100):
        params = types.PaginatedRequestParams(cursor=cursor) if cursor is not None else None
        page = await fetch(params)
        items.extend(getattr(page, field))
        cursor = page.next_cursor
        if cursor is None:
            return items
    raise CheckFailed(f"{field}: still a nextCursor after 100 pages")


async def run_era(binary: str, db: str, era: str, report: Report) -> None:
    """Starts a server, connects in `era` ("legacy" or "modern"), and runs every check."""
    server = StdioServerParameters(command=binary, args=["--db", db, "serve"])
    notifications_in, notifications_out = anyio.create_memory_object_stream[Any](100)

    async def on_message(message: Any) -> None:
        # Legacy change notifications arrive here; transport faults too, and are ignored.
        if not isinstance(message, Exception):
            await notifications_in.send(message)

    async with stdio_client(server) as (read, write):
        async with ClientSession(
            read, write, read_timeout_seconds=REQUEST_TIMEOUT_SECONDS, message_handler=on_message
        ) as session:
            await run_checks(session, era, report)
            await check_notifications(session, binary, db, era, notifications_out, report)


async def add_prompt(binary: str, db: str, era: str) -> None:
    """Changes the library from a second process, as a person at a terminal would."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / f"interop-{era}.prompt.md"
        path.write_text(f"---\ndescription: Written by the interop test ({era}, {time.time()})\n---\nHello.\n")
        result = await anyio.run_process([binary, "--db", db, "prompt", "add", str(path)], check=False)
        expect(result.returncode == 0, f"promptshelf prompt add failed: {result.stderr.decode(errors='replace')}")


async def run_http_era(url: str, token: str | None, binary: str, db: str, era: str, report: Report) -> None:
    """Connects to the server at `url` over Streamable HTTP in `era` and runs the same checks."""
    notifications_in, notifications_out = anyio.create_memory_object_stream[Any](100)

    async def on_message(message: Any) -> None:
        # Legacy change notifications come on the session's GET stream.
        if not isinstance(message, Exception):
            await notifications_in.send(message)

    # A server serving with tokens (`serve --http`'s default) takes one on every request.
    headers = {"Authorization": f"Bearer {token}"} if token else None
    async with create_mcp_http_client(headers=headers) as client:
        async with streamable_http_client(url, http_client=client) as (read, write):
            async with ClientSession(
                read, write, read_timeout_seconds=REQUEST_TIMEOUT_SECONDS, message_handler=on_message
            ) as session:
                await run_checks(session, era, report, transport=" http")
                await check_notifications(session, binary, db, era, notifications_out, report, transport=" http")


async def check_notifications(
    session: ClientSession,
    binary: str,
    db: str,
    era: str,
    received: Any,
    report: Report,
    transport: str = "",
) -> None:
    tag = f"[{era}{transport}]"

    async def legacy_list_changed() -> str:
        await add_prompt(binary, db, era)
        with anyio.fail_after(NOTIFY_TIMEOUT_SECONDS):
            while True:
                message = await received.receive()
                if isinstance(message, types.PromptListChangedNotification):
                    return "notifications/prompts/list_changed after a CLI write"

    async def modern_list_changed() -> str:
        async with listen(session, prompts_list_changed=True) as subscription:
            expect(subscription.honored.prompts_list_changed, f"the server did not honour promptsListChanged: {subscription.honored}")
            await add_prompt(binary, db, era)
            with anyio.fail_after(NOTIFY_TIMEOUT_SECONDS):
                event = await subscription.__anext__()
        return f"{type(event).__name__} on subscriptions/listen after a CLI write"

    if era == "legacy":
        await report.check(f"{tag} list_changed notification", legacy_list_changed)
    else:
        await report.check(f"{tag} subscriptions/listen notification", modern_list_changed)


async def run_checks(session: ClientSession, era: str, report: Report, transport: str = "") -> None:
    tag = f"[{era}{transport}]"

    async def handshake() -> str:
        if era == "legacy":
            result = await session.initialize()
            expect(
                result.protocol_version == "2025-11-25",
                f"initialize offered 2025-11-25 (the SDK's newest handshake revision) and got "
                f"{result.protocol_version!r} back",
            )
        else:
            discovered = await session.discover()
            expect(
                "2026-07-28" in discovered.supported_versions,
                f"server/discover lists {discovered.supported_versions}, without 2026-07-28",
            )
        version = session.protocol_version
        print(f"{tag} negotiated protocol version: {version}", flush=True)
        capabilities = session.server_capabilities
        expect(capabilities is not None, "no server capabilities after the handshake")
        assert capabilities is not None
        expect(capabilities.prompts is not None, "the server does not declare the prompts capability")
        expect(capabilities.resources is not None, "the server does not declare the resources capability")
        expect(capabilities.completions is not None, "the server does not declare the completions capability")
        expect(capabilities.tools is None, f"the server declares tools without serve --tools: {capabilities.tools}")
        info = session.server_info
        name = info.name if info else None
        return f"protocol {version}, server {name}"

    if not await report.check(f"{tag} handshake", handshake):
        # Nothing else can work without a negotiated revision; the failure is already counted.
        return
    version = session.protocol_version
    listed_resources: dict[str, types.Resource] = {}

    async def list_prompts() -> str:
        prompts = await list_all(lambda params: session.list_prompts(params=params), "prompts")
        names = {prompt.name for prompt in prompts}
        missing = sorted(SEED_PROMPTS - names)
        expect(not missing, f"prompts/list lacks seed prompts {missing}; it listed {sorted(names)}")
        return f"{len(prompts)} prompts"

    async def get_summarize() -> str:
        text = "The release moved from Friday to Monday because the migration needs one more test run."
        result = await session.get_prompt("summarize", {"text": text, "length": "short"})
        expect(result.messages, "prompts/get summarize returned no messages")
        first = result.messages[0]
        expect(first.role == "user", f"the first message's role is {first.role!r}, not 'user'")
        expect(
            isinstance(first.content, types.TextContent),
            f"the first message is a {type(first.content).__name__}, not text",
        )
        assert isinstance(first.content, types.TextContent)
        expect(text in first.content.text, "the rendered prompt does not contain the `text` argument")
        # The template has one branch per `length`; "short" asks for two or three sentences.
        expect(
            "two or three sentences" in first.content.text,
            "the rendered prompt ignored length=short (no 'two or three sentences')",
        )
        return f"{len(result.messages)} message(s)"

    async def get_api_design_review() -> str:
        result = await session.get_prompt("api-design-review", {"spec": "GET /users/{id} returns a user."})
        contents = [message.content for message in result.messages]
        kinds = [getattr(content, "type", type(content).__name__) for content in contents]
        embedded = [
            content
            for content in contents
            if isinstance(content, types.EmbeddedResource) and str(content.resource.uri) == GUIDE_URI
        ]
        expect(embedded, f"no embedded resource block for {GUIDE_URI}; message blocks: {kinds}")
        resource = embedded[0].resource
        expect(
            isinstance(resource, types.TextResourceContents) and resource.text.strip(),
            f"the embedded {GUIDE_URI} carries no text",
        )
        if at_least(version, "2025-06-18"):
            links = [
                content
                for content in contents
                if isinstance(content, types.ResourceLink) and str(content.uri) == STATUS_CODES_URI
            ]
            expect(links, f"no resource_link block for {STATUS_CODES_URI} under {version}; message blocks: {kinds}")
        else:
            # Older revisions have no resource_link: the server degrades it to text naming the URI.
            named = [
                content
                for content in contents
                if isinstance(content, types.TextContent) and STATUS_CODES_URI in content.text
            ]
            expect(named, f"no text block naming {STATUS_CODES_URI} under {version}; message blocks: {kinds}")
        return f"blocks {kinds}"

    async def list_resources() -> str:
        resources = await list_all(lambda params: session.list_resources(params=params), "resources")
        for resource in resources:
            listed_resources[str(resource.uri)] = resource
        guide = listed_resources.get(GUIDE_URI)
        expect(guide is not None, f"resources/list lacks {GUIDE_URI}; it listed {sorted(listed_resources)}")
        assert guide is not None
        expect(guide.mime_type == "text/markdown", f"{GUIDE_URI} has mimeType {guide.mime_type!r}")
        png = listed_resources.get(PNG_URI)
        expect(png is not None, f"resources/list lacks {PNG_URI}; it listed {sorted(listed_resources)}")
        assert png is not None
        expect(png.mime_type == "image/png", f"{PNG_URI} has mimeType {png.mime_type!r}")
        return f"{len(resources)} resources"

    async def read_text() -> str:
        result = await session.read_resource(GUIDE_URI)
        expect(len(result.contents) == 1, f"resources/read {GUIDE_URI} returned {len(result.contents)} contents")
        content = result.contents[0]
        expect(
            isinstance(content, types.TextResourceContents),
            f"{GUIDE_URI} came back as {type(content).__name__}, not text",
        )
        assert isinstance(content, types.TextResourceContents)
        expect(str(content.uri) == GUIDE_URI, f"the contents name {content.uri}, not {GUIDE_URI}")
        expect(content.mime_type == "text/markdown", f"the contents have mimeType {content.mime_type!r}")
        expect("HTTP API" in content.text, f"the text of {GUIDE_URI} does not mention 'HTTP API'")
        # When the listing states a size, it must be the size of what a read returns.
        listed = listed_resources.get(GUIDE_URI)
        size = len(content.text.encode("utf-8"))
        if listed is not None and listed.size is not None:
            expect(listed.size == size, f"resources/list says size {listed.size}, the text is {size} bytes")
        return f"{size} bytes of text"

    async def read_png() -> str:
        result = await session.read_resource(PNG_URI)
        expect(len(result.contents) == 1, f"resources/read {PNG_URI} returned {len(result.contents)} contents")
        content = result.contents[0]
        expect(
            isinstance(content, types.BlobResourceContents),
            f"{PNG_URI} came back as {type(content).__name__}, not a blob",
        )
        assert isinstance(content, types.BlobResourceContents)
        expect(content.mime_type == "image/png", f"the contents have mimeType {content.mime_type!r}")
        try:
            data = base64.b64decode(content.blob, validate=True)
        except ValueError as error:
            raise CheckFailed(f"the blob of {PNG_URI} is not valid base64: {error}") from error
        expect(data.startswith(PNG_SIGNATURE), f"the blob does not start with the PNG signature: {data[:8]!r}")
        listed = listed_resources.get(PNG_URI)
        if listed is not None and listed.size is not None:
            expect(listed.size == len(data), f"resources/list says size {listed.size}, the blob is {len(data)} bytes")
        return f"{len(data)} bytes of PNG"

    async def list_templates() -> str:
        templates = await list_all(
            lambda params: session.list_resource_templates(params=params), "resource_templates"
        )
        uris = [template.uri_template for template in templates]
        expect(LIBRARY_TEMPLATE in uris, f"resources/templates/list lacks {LIBRARY_TEMPLATE}; it listed {uris}")
        return f"{len(templates)} template(s)"

    async def complete_language() -> str:
        result = await session.complete(
            types.PromptReference(type="ref/prompt", name="code-review"),
            {"name": "language", "value": "py"},
        )
        values = result.completion.values
        expect("python" in values, f"completing language='py' of code-review gave {values}, without 'python'")
        return f"values {values}"

    async def complete_path() -> str:
        result = await session.complete(
            types.ResourceTemplateReference(type="ref/resource", uri=LIBRARY_TEMPLATE),
            {"name": "path", "value": "gu"},
        )
        values = result.completion.values
        expect(values, f"completing path='gu' of {LIBRARY_TEMPLATE} gave no values")
        # Every stored guide lives under guides/, so each one should be offered.
        expect(
            "guides/api-design.md" in values,
            f"completing path='gu' of {LIBRARY_TEMPLATE} gave {values}, without 'guides/api-design.md'",
        )
        return f"values {values}"

    await report.check(f"{tag} prompts/list has the seed prompts", list_prompts)
    await report.check(f"{tag} prompts/get summarize", get_summarize)
    await report.check(f"{tag} prompts/get api-design-review embeds and links", get_api_design_review)
    await report.check(f"{tag} resources/list has markdown and PNG", list_resources)
    await report.check(f"{tag} resources/read text", read_text)
    await report.check(f"{tag} resources/read PNG", read_png)
    await report.check(f"{tag} resources/templates/list", list_templates)
    await report.check(f"{tag} completion/complete code-review language", complete_language)
    await report.check(f"{tag} completion/complete template path", complete_path)


TOOLS = ["list_prompts", "get_prompt", "list_resources", "read_resource"]


async def run_tools_era(binary: str, db: str, era: str, report: Report) -> None:
    """Starts a server with every tool mirror on, connects in `era`, and uses each tool."""
    tag = f"[{era} --tools]"
    server = StdioServerParameters(command=binary, args=["--db", db, "serve", "--tools", "prompts,resources"])
    async with stdio_client(server) as (read, write):
        async with ClientSession(read, write, read_timeout_seconds=REQUEST_TIMEOUT_SECONDS) as session:

            async def handshake() -> str:
                if era == "legacy":
                    await session.initialize()
                else:
                    await session.discover()
                capabilities = session.server_capabilities
                expect(capabilities is not None and capabilities.tools is not None, "no tools capability with --tools")
                assert capabilities is not None and capabilities.tools is not None
                expect(capabilities.tools.list_changed, "the tool list is not said to change with the prompts")
                return f"protocol {session.protocol_version}, tools {capabilities.tools}"

            if not await report.check(f"{tag} handshake declares tools", handshake):
                return

            async def list_tools() -> str:
                listed = await session.list_tools()
                names = [tool.name for tool in listed.tools]
                expect(names == TOOLS, f"tools/list gave {names}, not {TOOLS}")
                for tool in listed.tools:
                    expect(tool.input_schema.get("type") == "object", f"{tool.name}'s inputSchema is not an object schema")
                    expect(tool.annotations is not None and tool.annotations.read_only_hint, f"{tool.name} is not read-only")
                    expect(tool.output_schema is not None, f"{tool.name} has no outputSchema")
                get_prompt = listed.tools[1]
                expect("summarize" in get_prompt.input_schema["properties"]["name"].get("enum", []), "get_prompt's name does not list summarize")
                return f"{len(names)} tools"

            async def call(name: str, arguments: dict[str, Any]) -> types.CallToolResult:
                # The SDK checks structuredContent against the tool's outputSchema itself.
                result = await session.call_tool(name, arguments)
                assert isinstance(result, types.CallToolResult)
                return result

            async def list_prompts() -> str:
                result = await call("list_prompts", {})
                expect(not result.is_error, f"list_prompts failed: {result.content}")
                names = {prompt["name"] for prompt in (result.structured_content or {}).get("prompts", [])}
                expect(SEED_PROMPTS <= names, f"list_prompts lacks seed prompts: {sorted(SEED_PROMPTS - names)}")
                return f"{len(names)} prompts"

            async def get_prompt() -> str:
                text = "The release moved from Friday to Monday."
                result = await call("get_prompt", {"name": "summarize", "arguments": {"text": text, "length": "short"}})
                expect(not result.is_error, f"get_prompt failed: {result.content}")
                first = result.content[0]
                expect(isinstance(first, types.TextContent) and text in first.text, "the rendered text lacks the argument")
                messages = (result.structured_content or {}).get("messages", [])
                expect(messages and messages[0]["role"] == "user", f"structuredContent messages: {messages}")
                return f"{len(result.content)} block(s)"

            async def list_resources() -> str:
                result = await call("list_resources", {})
                expect(not result.is_error, f"list_resources failed: {result.content}")
                uris = [resource["uri"] for resource in (result.structured_content or {}).get("resources", [])]
                expect(GUIDE_URI in uris, f"list_resources lacks {GUIDE_URI}")
                return f"{len(uris)} resources"

            async def read_resource() -> str:
                result = await call("read_resource", {"uri": GUIDE_URI})
                expect(not result.is_error, f"read_resource failed: {result.content}")
                block = result.content[0]
                expect(isinstance(block, types.EmbeddedResource), f"read_resource gave a {type(block).__name__}")
                assert isinstance(block, types.EmbeddedResource)
                expect(isinstance(block.resource, types.TextResourceContents) and "HTTP API" in block.resource.text, "the guide's text is missing")
                return f"{GUIDE_URI} as an embedded resource"

            async def bad_argument() -> str:
                result = await call("get_prompt", {"name": "write-tests", "arguments": {"code": "x", "cases": 99}})
                expect(result.is_error, "a value out of bounds was not a tool error")
                sentence = result.content[0].text if isinstance(result.content[0], types.TextContent) else ""
                expect("argument 'cases' of prompt 'write-tests' expects an integer from 1 to 50" in sentence, f"the tool error says {sentence!r}")
                return sentence

            await report.check(f"{tag} tools/list", list_tools)
            await report.check(f"{tag} tools/call list_prompts", list_prompts)
            await report.check(f"{tag} tools/call get_prompt", get_prompt)
            await report.check(f"{tag} tools/call list_resources", list_resources)
            await report.check(f"{tag} tools/call read_resource", read_resource)
            await report.check(f"{tag} tools/call get_prompt with a bad argument", bad_argument)


async def check_elicitation(binary: str, db: str, report: Report) -> None:
    """The SDK's own multi-round-trip driver fills a missing argument through a form."""
    asked: list[Any] = []

    async def on_elicit(context: Any, params: Any) -> types.ElicitResult:
        asked.append(params)
        return types.ElicitResult(action="accept", content={"code": "print('from the form')"})

    async def round_trip() -> str:
        server = StdioServerParameters(command=binary, args=["--db", db, "serve"])
        async with Client(server, elicitation_callback=on_elicit, read_timeout_seconds=REQUEST_TIMEOUT_SECONDS) as client:
            result = await client.get_prompt("code-review", {"focus": "naming"})
        expect(len(asked) == 1, f"the server asked {len(asked)} times for the missing argument, not once")
        schema = asked[0].requested_schema
        required = schema.get("required") if isinstance(schema, dict) else getattr(schema, "required", None)
        expect(required == ["code"], f"the form asked for {required}, not just ['code']")
        text = "\n".join(m.content.text for m in result.messages if isinstance(m.content, types.TextContent))
        expect("print('from the form')" in text, "the rendered prompt lacks the value given in the form")
        expect("naming" in text, "the rendered prompt lost the argument given with the first request")
        return f"asked once for {required}, rendered {len(result.messages)} message(s)"

    await report.check("[modern] elicitation round trip for a missing argument", round_trip)


# The server's `--elicitation-timeout` for the check of a form nobody answers.
SHORT_ELICITATION_TIMEOUT_SECONDS = 1
MISSING_CODE = "prompt 'code-review' needs the required argument 'code'"


async def check_legacy_elicitation(binary: str, db: str, report: Report) -> None:
    """In a legacy session the server asks the SDK's elicitation callback itself."""

    async def ask(answer: Callable[[Any], Awaitable[Any]], extra: list[str]) -> tuple[list[Any], Any]:
        """prompts/get of code-review without `code` after `initialize`, with `answer` as the
        callback: the forms asked and the result (or the error raised)."""
        asked: list[Any] = []

        async def on_elicit(context: Any, params: Any) -> Any:
            asked.append(params)
            return await answer(params)

        server = StdioServerParameters(command=binary, args=["--db", db, "serve", *extra])
        async with stdio_client(server) as (read, write):
            async with ClientSession(
                read, write, read_timeout_seconds=REQUEST_TIMEOUT_SECONDS, elicitation_callback=on_elicit
            ) as session:
                opened = await session.initialize()
                expect(
                    at_least(opened.protocol_version, "2025-06-18"),
                    f"negotiated {opened.protocol_version}, which has no elicitation/create",
                )
                try:
                    outcome: Any = await session.get_prompt("code-review", {"focus": "naming"})
                except Exception as error:  # noqa: BLE001 - the SDK raises the server's error
                    outcome = error
        return asked, outcome

    def refused(outcome: Any, asked: list[Any]) -> str:
        expect(len(asked) == 1, f"the server asked {len(asked)} times, not once")
        expect(isinstance(outcome, Exception), f"prompts/get succeeded: {outcome}")
        expect(MISSING_CODE in str(outcome), f"the error says {outcome!s}, not {MISSING_CODE!r}")
        return str(outcome)

    async def accept() -> str:
        async def fill(params: Any) -> types.ElicitResult:
            return types.ElicitResult(action="accept", content={"code": "print('from the form')"})

        asked, result = await ask(fill, [])
        expect(len(asked) == 1, f"the server asked {len(asked)} times for the missing argument, not once")
        schema = asked[0].requested_schema
        required = schema.get("required") if isinstance(schema, dict) else getattr(schema, "required", None)
        expect(required == ["code"], f"the form asked for {required}, not just ['code']")
        expect(not isinstance(result, Exception), f"prompts/get failed: {result}")
        text = "\n".join(m.content.text for m in result.messages if isinstance(m.content, types.TextContent))
        expect("print('from the form')" in text, "the rendered prompt lacks the value given in the form")
        expect("naming" in text, "the rendered prompt lost the argument given with the request")
        return f"asked for {required}, rendered {len(result.messages)} message(s)"

    async def action(name: str) -> Callable[[], Awaitable[str]]:
        async def check() -> str:
            async def answer(params: Any) -> types.ElicitResult:
                return types.ElicitResult(action=name)

            asked, outcome = await ask(answer, [])
            return refused(outcome, asked)

        return check

    async def unanswered() -> str:
        async def never(params: Any) -> types.ElicitResult:
            await anyio.sleep(REQUEST_TIMEOUT_SECONDS)
            return types.ElicitResult(action="accept", content={"code": "too late"})

        asked, outcome = await ask(never, ["--elicitation-timeout", str(SHORT_ELICITATION_TIMEOUT_SECONDS)])
        return refused(outcome, asked)

    await report.check("[legacy] elicitation/create accepted", accept)
    await report.check("[legacy] elicitation/create declined", await action("decline"))
    await report.check("[legacy] elicitation/create cancelled", await action("cancel"))
    await report.check("[legacy] elicitation/create unanswered until --elicitation-timeout", unanswered)


@asynccontextmanager
async def provenance_session(binary: str, db: str, url: str | None, token: str | None) -> AsyncIterator[ClientSession]:
    """A session with the server serving DB: over stdio, or over Streamable HTTP at `url`."""
    if url is None:
        server = StdioServerParameters(command=binary, args=["--db", db, "serve"])
        async with stdio_client(server) as (read, write):
            async with ClientSession(read, write, read_timeout_seconds=REQUEST_TIMEOUT_SECONDS) as session:
                yield session
        return
    headers = {"Authorization": f"Bearer {token}"} if token else None
    async with create_mcp_http_client(headers=headers) as client:
        async with streamable_http_client(url, http_client=client) as (read, write):
            async with ClientSession(read, write, read_timeout_seconds=REQUEST_TIMEOUT_SECONDS) as session:
                yield session


async def check_provenance(
    binary: str, db: str, prompt: str, uri: str, url: str | None, token: str | None, report: Report
) -> None:
    """Reads the provenance of `prompt` and `uri` in each era and prints it for the caller,
    with the text of the prompt's first message."""

    def printed(tag: str, method: str, meta: Any) -> str:
        expect(meta is not None, f"{method} carries no _meta")
        provenance = dict(meta).get(PROVENANCE_KEY)
        expect(isinstance(provenance, dict), f"{method}'s _meta has no {PROVENANCE_KEY}: {meta}")
        print(f"provenance {tag} {method} {json.dumps(provenance, sort_keys=True)}", flush=True)
        return f"{len(provenance)} fields"

    for era in ["legacy", "modern"]:
        tag = f"[{era}]"
        async with provenance_session(binary, db, url, token) as session:
            if era == "legacy":
                await session.initialize()
            else:
                await session.discover()

            async def get() -> str:
                result = await session.get_prompt(prompt)
                first = result.messages[0].content
                text = first.text if isinstance(first, types.TextContent) else ""
                print(f"text {tag} prompts/get {json.dumps(text)}", flush=True)
                return printed(tag, "prompts/get", result.meta)

            async def read_contents() -> str:
                result = await session.read_resource(uri)
                expect(len(result.contents) == 1, f"resources/read {uri} returned {len(result.contents)} contents")
                return printed(tag, "resources/read", result.contents[0].meta)

            await report.check(f"{tag} provenance of prompts/get {prompt}", get)
            await report.check(f"{tag} provenance of resources/read {uri}", read_contents)


async def main_provenance(binary: str, db: str, prompt: str, uri: str, url: str | None, token: str | None) -> Report:
    report = Report()
    try:
        with anyio.fail_after(ERA_TIMEOUT_SECONDS):
            await check_provenance(binary, db, prompt, uri, url, token, report)
    except TimeoutError:
        report.fail("[provenance] session", f"did not finish within {ERA_TIMEOUT_SECONDS:.0f}s")
    return report


async def main_http(url: str, token: str | None, binary: str, db: str, eras: list[str]) -> Report:
    report = Report()
    for era in eras:
        started = time.monotonic()
        try:
            with anyio.fail_after(ERA_TIMEOUT_SECONDS):
                await run_http_era(url, token, binary, db, era, report)
        except TimeoutError:
            report.fail(f"[{era} http] session", f"did not finish within {ERA_TIMEOUT_SECONDS:.0f}s")
        except Exception as error:  # noqa: BLE001 - a broken connection is a failure to report
            report.fail(f"[{era} http] session", f"{type(error).__name__}: {error}")
        print(f"[{era} http] took {time.monotonic() - started:.2f}s", flush=True)
    return report


async def main_async(binary: str, db: str, eras: list[str]) -> Report:
    report = Report()
    for era in eras:
        started = time.monotonic()
        try:
            with anyio.fail_after(ERA_TIMEOUT_SECONDS):
                await run_era(binary, db, era, report)
        except TimeoutError:
            report.fail(f"[{era}] session", f"did not finish within {ERA_TIMEOUT_SECONDS:.0f}s")
        except Exception as error:  # noqa: BLE001 - a broken connection is a failure to report
            report.fail(f"[{era}] session", f"{type(error).__name__}: {error}")
        print(f"[{era}] took {time.monotonic() - started:.2f}s", flush=True)
        try:
            with anyio.fail_after(ERA_TIMEOUT_SECONDS):
                await run_tools_era(binary, db, era, report)
        except TimeoutError:
            report.fail(f"[{era} --tools] session", f"did not finish within {ERA_TIMEOUT_SECONDS:.0f}s")
        except Exception as error:  # noqa: BLE001 - a broken connection is a failure to report
            report.fail(f"[{era} --tools] session", f"{type(error).__name__}: {error}")
    if "legacy" in eras:
        try:
            with anyio.fail_after(ERA_TIMEOUT_SECONDS):
                await check_legacy_elicitation(binary, db, report)
        except TimeoutError:
            report.fail("[legacy] elicitation", f"did not finish within {ERA_TIMEOUT_SECONDS:.0f}s")
    if "modern" in eras:
        try:
            with anyio.fail_after(ERA_TIMEOUT_SECONDS):
                await check_elicitation(binary, db, report)
        except TimeoutError:
            report.fail("[modern] elicitation", f"did not finish within {ERA_TIMEOUT_SECONDS:.0f}s")
    return report


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("binary", help="the promptshelf binary")
    parser.add_argument("db", help="the library database (created with the seed library if missing)")
    parser.add_argument("--era", choices=["legacy", "modern", "both"], default="both")
    parser.add_argument("--http", metavar="URL", help="use the server serving DB over Streamable HTTP at URL")
    parser.add_argument("--token", help="the bearer token the HTTP server takes (`promptshelf token add`)")
    parser.add_argument(
        "--provenance", nargs=2, metavar=("PROMPT", "URI"), help="only print where PROMPT and URI come from"
    )
    args = parser.parse_args()
    eras = ["legacy", "modern"] if args.era == "both" else [args.era]

    if args.provenance:
        report = anyio.run(main_provenance, args.binary, args.db, *args.provenance, args.http, args.token)
    elif args.http:
        report = anyio.run(main_http, args.http, args.token, args.binary, args.db, eras)
    else:
        report = anyio.run(main_async, args.binary, args.db, eras)
    for failure in report.failed:
        print(f"failed: {failure}", file=sys.stderr)
    print(f"interop: {report.passed} passed, {len(report.failed)} failed", flush=True)
    return 0 if not report.failed else 1


if __name__ == "__main__":
    sys.exit(main())
