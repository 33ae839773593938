/**
 * Against a `memesh serve` listening beyond loopback (MEMESH_URL, started by
 * tests/e2e/test_openclaw_plugin.py with MEMESH_REMOTE_TOKEN): without the token memesh
 * refuses with its errorCode; with it — from MEMESH_TOKEN, or the plugin's `token` setting —
 * the round trip works.
 */

import assert from "node:assert/strict";
import { test } from "node:test";

import plugin from "../src/index.js";
import { load, requiredEnv, runTool } from "./host.js";

const url = requiredEnv("MEMESH_URL");
const token = requiredEnv("MEMESH_TOKEN");

test("without the remote token memesh refuses the call", async () => {
  const saved = process.env.MEMESH_TOKEN;
  delete process.env.MEMESH_TOKEN;
  try {
    const refused = await runTool(load(plugin, { url }), "memory_search", { query: "x" });
    assert.equal((refused.details as { errorCode: string }).errorCode, "auth.missing-bearer");
  } finally {
    process.env.MEMESH_TOKEN = saved;
  }
});

test("with MEMESH_TOKEN set, a memory is stored and recalled", async () => {
  const loaded = load(plugin, { url });
  const stored = await runTool(loaded, "memory_store", {
    name: "openclaw-remote-note",
    type: "note",
    observations: ["Reached the remote memesh with its token"],
  });
  assert.match(stored.content[0]?.text ?? "", /^Stored: openclaw-remote-note/);
  const found = await runTool(loaded, "memory_search", { query: "remote memesh token" });
  assert.match(found.content[0]?.text ?? "", /Reached the remote memesh with its token/);
});

test("the plugin's token setting is sent too", async () => {
  const saved = process.env.MEMESH_TOKEN;
  delete process.env.MEMESH_TOKEN;
  try {
    const found = await runTool(load(plugin, { url, token }), "memory_search", { query: "remote memesh" });
    assert.match(found.content[0]?.text ?? "", /Reached the remote memesh/);
  } finally {
    process.env.MEMESH_TOKEN = saved;
  }
});
