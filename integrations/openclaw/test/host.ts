/**
 * The host side of a plugin load, as OpenClaw does it: call the entry's `register(api)` with
 * an API that keeps what the plugin registers (its memory capability, tools and hooks), so a
 * test can then call them the way OpenClaw's agent loop does. The memesh behind them is real:
 * the `memesh serve` at MEMESH_URL.
 */

import type {
  AgentTool,
  BeforePromptBuildEvent,
  BeforePromptBuildResult,
  MemoryPluginCapability,
  OpenClawPluginApi,
  PluginEntry,
} from "../src/host-api.js";

export type Loaded = {
  capability?: MemoryPluginCapability;
  tools: Map<string, AgentTool>;
  beforePromptBuild: Array<(event: BeforePromptBuildEvent) => unknown>;
  warnings: string[];
};

/** OpenClaw's config once the user has let memesh's prompt hook run (docs/platforms/openclaw.md). */
export const CONSENTED = { plugins: { entries: { memesh: { hooks: { allowConversationAccess: true } } } } };

export function load(entry: PluginEntry, pluginConfig: unknown, hostConfig: unknown = CONSENTED): Loaded {
  const loaded: Loaded = { tools: new Map(), beforePromptBuild: [], warnings: [] };
  const api: OpenClawPluginApi = {
    config: hostConfig,
    pluginConfig,
    logger: { info() {}, warn: (message) => loaded.warnings.push(message) },
    registerMemoryCapability(capability) {
      loaded.capability = capability;
    },
    registerTool(tool) {
      loaded.tools.set(tool.name, tool);
    },
    on(hookName, handler) {
      if (hookName === "before_prompt_build") loaded.beforePromptBuild.push(handler);
    },
  };
  entry.register(api);
  return loaded;
}

export async function runTool(loaded: Loaded, name: string, params: Record<string, unknown>) {
  const tool = loaded.tools.get(name);
  if (!tool) throw new Error(`the plugin registered no tool ${name}`);
  return tool.execute(`call-${name}`, params);
}

export async function beforePromptBuild(
  loaded: Loaded,
  prompt: string,
): Promise<BeforePromptBuildResult | undefined> {
  let result: BeforePromptBuildResult | undefined;
  for (const handler of loaded.beforePromptBuild) {
    result = ((await handler({ prompt, messages: [] })) as BeforePromptBuildResult | undefined) ?? result;
  }
  return result;
}

export function requiredEnv(name: string): string {
  const value = process.env[name];
  if (!value) {
    throw new Error(`${name} is not set: run these tests through tests/e2e/test_openclaw_plugin.py`);
  }
  return value;
}
