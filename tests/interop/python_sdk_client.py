"""Drives the real minirag-mcp binary with the official Python MCP SDK.

usage: python_sdk_client.py BINARY MODEL_DIR [stdio|http] [2025|2026]
Builds a small corpus in a temp folder, then over stdio (or over
Streamable HTTP against `serve --http` with a bearer token), at the newest
handshake revision (2025-11-25, `initialize`) or at 2026-07-28 (the SDK's
`Client` in auto mode: `server/discover`, no session): list tools with their
annotations and output schemas, status, sync with a progress token, query,
read, resources (list, template, read, list_changed after a sync, an ingest
and a delete: on the
session at 2025, on a `subscriptions/listen` stream at 2026), an unknown
argument, an escaping path. Every successful tool call's structuredContent
is validated against the tool's outputSchema (by the SDK, and again here).
Exits non-zero with the failed check on any mismatch.
"""
import asyncio
import contextlib
import http.server
import json
import threading
import urllib.parse

import jsonschema
from mcp import types
import os
import sys
import tempfile

from mcp import Client, ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

TOKEN = "interop-token-0123456789abcdef"

TOOLS = {
    "delete_file", "ingest_data", "ingest_file", "ingest_url", "list_files",
    "query_documents", "read_chunk_neighbors", "read_file", "status",
    "sync_start", "sync_status",
}


# (readOnly, destructive, idempotent, openWorld) per tool.
HINTS = {
    "query_documents": (True, False, True, False),
    "read_file": (True, False, True, False),
    "read_chunk_neighbors": (True, False, True, False),
    "list_files": (True, False, True, False),
    "status": (True, False, True, False),
    "sync_status": (True, False, True, False),
    "delete_file": (False, True, True, False),
    "ingest_file": (False, True, True, False),
    "ingest_data": (False, True, True, False),
    "ingest_url": (False, True, False, True),
    "sync_start": (False, True, True, False),
}
SCHEMAS = {}


def text_of(result):
    return "".join(c.text for c in result.content if getattr(c, "type", "") == "text")


def check_structured(tool, result):
    """structuredContent matches the outputSchema and is the text block's JSON."""
    assert result.structured_content is not None, f"{tool}: no structuredContent"
    jsonschema.validate(result.structured_content, SCHEMAS[tool])
    assert json.loads(text_of(result)) == result.structured_content, tool


async def call_json(session, tool, args):
    result = await session.call_tool(tool, args)
    assert not result.is_error, f"{tool} failed: {text_of(result)}"
    check_structured(tool, result)
    return json.loads(text_of(result))


class Page(http.server.BaseHTTPRequestHandler):
    """A loopback page for ingest_url."""

    def do_GET(self):
        body = b"<html><title>Kites</title><body><h1>Kites</h1><p>Kites need steady wind.</p></body></html>"
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@contextlib.asynccontextmanager
async def connect(transport, binary, env):
    """A transport to the binary: over stdio, or over HTTP."""
    if transport == "stdio":
        yield stdio_client(StdioServerParameters(command=binary, env=env))
        return
    env = dict(env, MINIRAG_TOKEN=TOKEN, PATH=os.environ.get("PATH", ""))
    server = await asyncio.create_subprocess_exec(
        binary, "serve", "--http", "127.0.0.1:0", env=env, stderr=asyncio.subprocess.PIPE
    )
    try:
        first = json.loads(await server.stderr.readline())
        assert first["event"] == "listening", first
        # Keep reading the request log so the server never blocks on a full pipe.
        drain = asyncio.create_task(server.stderr.read())
        client = create_mcp_http_client(headers={"Authorization": f"Bearer {TOKEN}"})
        async with client:
            yield streamable_http_client(first["url"], http_client=client)
    finally:
        server.terminate()
        code = await server.wait()
        assert code == 0, f"serve --http exited {code} after SIGTERM"
        await drain


class Legacy:
    """2025-11-25: `initialize`, one session, list_changed on the session."""

    def __init__(self, session, changed):
        self.session = session
        self.changed = changed
        self.version = "2025-11-25"

    @contextlib.asynccontextmanager
    async def changes(self):
        yield self.changed


class Modern:
    """2026-07-28: the SDK's Client; changes arrive on subscriptions/listen."""

    def __init__(self, client):
        self.session = client
        self.version = "2026-07-28"

    @contextlib.asynccontextmanager
    async def changes(self):
        changed = asyncio.Event()
        async with self.session.listen(resources_list_changed=True) as sub:
            assert sub.honored.resources_list_changed, sub.honored

            async def first():
                async for _ in sub:
                    changed.set()
                    return

            task = asyncio.create_task(first())
            try:
                yield changed
            finally:
                task.cancel()


@contextlib.asynccontextmanager
async def revision(era, transport_cm, on_message):
    """The client at the revision asked for."""
    if era == "2025":
        async with transport_cm as (read, write):
            async with ClientSession(read, write, message_handler=on_message) as session:
                init = await session.initialize()
                assert init.server_info.name == "minirag-mcp", init.server_info
                assert "Sources" in (init.instructions or ""), init.instructions
                assert init.protocol_version == "2025-11-25", init.protocol_version
                assert init.capabilities.resources is not None, init.capabilities
                assert init.capabilities.resources.list_changed, init.capabilities
                yield session
        return
    async with Client(transport_cm, mode="auto") as client:
        assert client.protocol_version == "2026-07-28", client.protocol_version
        assert client.server_info.name == "minirag-mcp", client.server_info
        assert "Sources" in (client.instructions or ""), client.instructions
        assert client.server_capabilities.resources.list_changed, client.server_capabilities
        yield client


async def main(binary, model_dir, transport, era):
    web = http.server.HTTPServer(("127.0.0.1", 0), Page)
    threading.Thread(target=web.serve_forever, daemon=True).start()
    page_url = f"http://127.0.0.1:{web.server_port}/kites.html"
    with tempfile.TemporaryDirectory() as tmp:
        root = os.path.join(os.path.realpath(tmp), "docs")
        os.makedirs(os.path.join(root, "ops"))
        with open(os.path.join(root, "ops", "retention.md"), "w") as f:
            f.write("# Retention\n\nWarehouse SPEC-112 keeps delivery notes for five years.\n")
        with open(os.path.join(root, "склад.md"), "w") as f:
            f.write("# Склад\n\nКладовщик сверяет накладную ТОРГ-12 с количеством мест.\n")
        env = {
            "BASE_DIR": root,
            "DB_PATH": os.path.join(tmp, "index"),
            "MODEL_PATH": model_dir,
            "CACHE_DIR": os.path.join(tmp, "cache"),
            "ALLOW_PRIVATE_URLS": "1",
        }
        changed = asyncio.Event()

        async def on_message(message):
            if isinstance(message, types.ResourceListChangedNotification):
                changed.set()

        async with connect(transport, binary, env) as transport_cm:
            async with revision(era, transport_cm, on_message) as session:
                api = Legacy(session, changed) if era == "2025" else Modern(session)
                listed_result = await session.list_tools()
                listed = listed_result.tools
                assert [t.name for t in listed] == sorted(TOOLS), listed
                if era == "2026":
                    assert listed_result.ttl_ms == 3600000 and listed_result.cache_scope == "public", listed_result
                for t in listed:
                    a = t.annotations
                    assert a is not None and a.title and t.title, t
                    got = (a.read_only_hint, a.destructive_hint, a.idempotent_hint, a.open_world_hint)
                    assert got == HINTS[t.name], (t.name, got)
                    assert t.output_schema and t.output_schema.get("type") == "object", t
                    jsonschema.Draft202012Validator.check_schema(t.output_schema)
                    SCHEMAS[t.name] = t.output_schema

                status = await call_json(session, "status", {})
                assert status["roots"] == [root], status

                progress = []

                async def on_progress(done, total, message):
                    progress.append((done, total, message))

                async with api.changes() as resources_changed:
                    result = await session.call_tool("sync_start", {}, progress_callback=on_progress)
                    # Resources: after the sync changed the set, the client hears of it.
                    await asyncio.wait_for(resources_changed.wait(), 30)
                check_structured("sync_start", result)
                job = json.loads(text_of(result))
                assert job["state"] == "succeeded", job
                assert job["counts"]["ingested"] == 2, job
                assert any((m or "").startswith("ingested ") for _, _, m in progress), progress

                q = await call_json(session, "query_documents", {"query": "SPEC-112", "topK": 3})
                first = q["results"][0]
                assert first["source"] == os.path.join(root, "ops", "retention.md"), q
                assert q["sources"][0]["displayPath"] == "ops/retention.md", q

                q = await call_json(session, "query_documents", {"query": "проверка накладной на складе"})
                assert q["results"][0]["source"] == os.path.join(root, "склад.md"), q

                doc = await call_json(session, "read_file", {"filePath": os.path.join(root, "склад.md")})
                assert "ТОРГ-12" in json.dumps(doc, ensure_ascii=False), doc

                templates = (await session.list_resource_templates()).resource_templates
                assert [t.uri_template for t in templates] == ["minirag://doc/{source}"], templates
                listing = await session.list_resources()
                if era == "2026":
                    assert listing.ttl_ms == 0 and listing.cache_scope == "private", listing
                resources = listing.resources
                store = os.path.join(root, "склад.md")
                uris = {r.name: str(r.uri) for r in resources}
                assert set(uris) == {store, os.path.join(root, "ops", "retention.md")}, uris
                assert uris[store] == "minirag://doc/" + urllib.parse.quote(store, safe=""), uris
                contents = (await session.read_resource(uris[store])).contents
                assert "ТОРГ-12" in contents[0].text and contents[0].mime_type == "text/markdown", contents
                try:
                    await session.read_resource("minirag://doc/" + urllib.parse.quote("/etc/passwd", safe=""))
                    raise AssertionError("an unindexed source was read")
                except Exception as e:  # the SDK raises McpError
                    assert "not found" in str(e).lower(), e
                    # -32602 (invalid params) from 2026-07-28 on, -32002 before.
                    code = e.error.code
                    assert code == (-32602 if era == "2026" else -32002), code

                for tool, args in [
                    ("status", {}),
                    ("list_files", {}),
                    ("read_chunk_neighbors", {"source": store, "chunkIndex": 0}),
                    ("sync_status", {"jobId": job["jobId"]}),
                ]:
                    await call_json(session, tool, args)
                # Every change to the document set is heard, at every revision.
                for tool, args in [
                    ("ingest_data", {"source": "note-1", "data": "Kites need steady wind."}),
                    ("delete_file", {"source": "note-1"}),
                    ("delete_file", {"filePath": store}),
                    ("ingest_file", {"filePath": store}),
                    ("ingest_url", {"url": page_url}),
                ]:
                    changed.clear()
                    async with api.changes() as resources_changed:
                        await call_json(session, tool, args)
                        await asyncio.wait_for(resources_changed.wait(), 30)

                bad = await session.call_tool("query_documents", {"query": "x", "colour": "red"})
                assert bad.is_error and "colour" in text_of(bad), text_of(bad)

                outside = await session.call_tool("read_file", {"filePath": os.path.join(root, "..", "index")})
                assert outside.is_error and "outside" in text_of(outside), text_of(outside)
    web.shutdown()
    print(f"python MCP SDK client at {era} over {transport}: all checks passed")


if __name__ == "__main__":
    args = sys.argv[1:] + [None, None]
    asyncio.run(main(args[0], args[1], args[2] or "stdio", args[3] or "2025"))
