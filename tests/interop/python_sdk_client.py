"""Drives the real minirag-mcp binary with the official Python MCP SDK.

usage: python_sdk_client.py BINARY MODEL_DIR
Builds a small corpus in a temp folder, then over stdio: initialize, list
tools, status, sync with a progress token, query, read, an unknown argument,
an escaping path. Exits non-zero with the failed check on any mismatch.
"""
import asyncio
import json
import os
import sys
import tempfile

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

TOOLS = {
    "delete_file", "ingest_data", "ingest_file", "ingest_url", "list_files",
    "query_documents", "read_chunk_neighbors", "read_file", "status",
    "sync_start", "sync_status",
}


def text_of(result):
    return "".join(c.text for c in result.content if getattr(c, "type", "") == "text")


async def call_json(session, tool, args):
    result = await session.call_tool(tool, args)
    assert not result.is_error, f"{tool} failed: {text_of(result)}"
    return json.loads(text_of(result))


async def main(binary, model_dir):
    with tempfile.TemporaryDirectory() as tmp:
        root = os.path.join(os.path.realpath(tmp), "docs")
        os.makedirs(os.path.join(root, "ops"))
        with open(os.path.join(root, "ops", "retention.md"), "w") as f:
            f.write("# Retention\n\nWarehouse SPEC-112 keeps delivery notes for five years.\n")
        with open(os.path.join(root, "склад.md"), "w") as f:
            f.write("# Склад\n\nКладовщик сверяет накладную ТОРГ-12 с количеством мест.\n")
        params = StdioServerParameters(
            command=binary,
            env={
                "BASE_DIR": root,
                "DB_PATH": os.path.join(tmp, "index"),
                "MODEL_PATH": model_dir,
                "CACHE_DIR": os.path.join(tmp, "cache"),
            },
        )
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as session:
                init = await session.initialize()
                assert init.server_info.name == "minirag-mcp", init.server_info
                assert "Sources" in (init.instructions or ""), init.instructions

                tools = {t.name for t in (await session.list_tools()).tools}
                assert tools == TOOLS, tools

                status = await call_json(session, "status", {})
                assert status["roots"] == [root], status

                progress = []

                async def on_progress(done, total, message):
                    progress.append((done, total, message))

                result = await session.call_tool("sync_start", {}, progress_callback=on_progress)
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

                bad = await session.call_tool("query_documents", {"query": "x", "colour": "red"})
                assert bad.is_error and "colour" in text_of(bad), text_of(bad)

                outside = await session.call_tool("read_file", {"filePath": os.path.join(root, "..", "index")})
                assert outside.is_error and "outside" in text_of(outside), text_of(outside)
    print("python MCP SDK client: all checks passed")


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2]))
