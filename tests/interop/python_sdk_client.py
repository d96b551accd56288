"""Drives the real minirag-mcp binary with the official Python MCP SDK.

usage: python_sdk_client.py BINARY MODEL_DIR [stdio|http]
Builds a small corpus in a temp folder, then over stdio (or over
Streamable HTTP against `serve --http` with a bearer token): initialize (the
newest handshake version both SDKs speak), list tools with their
annotations and output schemas, status, sync with a progress token, query,
read, resources (list, template, read, list_changed after a sync), an
unknown argument, an escaping path. Every successful tool call's
structuredContent is validated against the tool's outputSchema (by the SDK,
and again here). Exits non-zero with the failed check on any mismatch.
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

from mcp import ClientSession, StdioServerParameters
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
    """(read, write) streams to the binary over stdio, or over HTTP."""
    if transport == "stdio":
        async with stdio_client(StdioServerParameters(command=binary, env=env)) as (read, write):
            yield read, write
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
            async with streamable_http_client(first["url"], http_client=client) as streams:
                yield streams[0], streams[1]
    finally:
        server.terminate()
        code = await server.wait()
        assert code == 0, f"serve --http exited {code} after SIGTERM"
        await drain


async def main(binary, model_dir, transport):
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

        async with connect(transport, binary, env) as (read, write):
            async with ClientSession(read, write, message_handler=on_message) as session:
                init = await session.initialize()
                assert init.server_info.name == "minirag-mcp", init.server_info
                assert "Sources" in (init.instructions or ""), init.instructions
                assert init.protocol_version == "2025-11-25", init.protocol_version
                assert init.capabilities.resources is not None, init.capabilities
                assert init.capabilities.resources.list_changed, init.capabilities

                listed = (await session.list_tools()).tools
                assert {t.name for t in listed} == TOOLS, listed
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

                result = await session.call_tool("sync_start", {}, progress_callback=on_progress)
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

                # Resources: after the sync changed the set, the client hears of it.
                await asyncio.wait_for(changed.wait(), 30)
                templates = (await session.list_resource_templates()).resource_templates
                assert [t.uri_template for t in templates] == ["minirag://doc/{source}"], templates
                resources = (await session.list_resources()).resources
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

                for tool, args in [
                    ("status", {}),
                    ("list_files", {}),
                    ("read_chunk_neighbors", {"source": store, "chunkIndex": 0}),
                    ("sync_status", {"jobId": job["jobId"]}),
                    ("ingest_data", {"source": "note-1", "data": "Kites need steady wind."}),
                    ("delete_file", {"source": "note-1"}),
                    ("ingest_file", {"filePath": store}),
                    ("ingest_url", {"url": page_url}),
                ]:
                    await call_json(session, tool, args)

                bad = await session.call_tool("query_documents", {"query": "x", "colour": "red"})
                assert bad.is_error and "colour" in text_of(bad), text_of(bad)

                outside = await session.call_tool("read_file", {"filePath": os.path.join(root, "..", "index")})
                assert outside.is_error and "outside" in text_of(outside), text_of(outside)
    web.shutdown()
    print(f"python MCP SDK client over {transport}: all checks passed")


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2], sys.argv[3] if len(sys.argv) > 3 else "stdio"))
