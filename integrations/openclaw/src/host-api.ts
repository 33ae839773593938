/**
 * The parts of OpenClaw's plugin API this plugin uses, as structural types.
 *
 * They follow OpenClaw's plugin SDK (`openclaw/plugin-sdk`: `definePluginEntry`, the
 * `OpenClawPluginApi` handed to `register(api)`, the memory capability of
 * `api.registerMemoryCapability` with its `MemoryPluginRuntime` and `MemorySearchManager`).
 * The plugin declares them itself instead of depending on the `openclaw` package: OpenClaw
 * is the host that loads the plugin, not a library it needs, and its SDK types change between
 * releases — only the fields below are relied on.
 */

export type ToolResult = {
  content: Array<{ type: "text"; text: string }>;
  details: unknown;
};

export type AgentTool = {
  name: string;
  label?: string;
  description: string;
  parameters: Record<string, unknown>;
  execute(toolCallId: string, params: Record<string, unknown>): Promise<ToolResult>;
};

export type MemorySearchResult = {
  path: string;
  startLine: number;
  endLine: number;
  score: number;
  snippet: string;
  source: "memory" | "sessions";
  citation?: string;
};

export type MemoryProviderStatus = {
  backend: "builtin" | "qmd";
  provider: string;
  model?: string;
  sources?: Array<"memory" | "sessions">;
  custom?: Record<string, unknown>;
};

export type MemorySearchManager = {
  search(
    query: string,
    opts?: { maxResults?: number; minScore?: number; sessionKey?: string },
  ): Promise<MemorySearchResult[]>;
  readFile(params: { relPath: string; from?: number; lines?: number }): Promise<{
    text: string;
    path: string;
    truncated?: boolean;
  }>;
  status(): MemoryProviderStatus;
  probeEmbeddingAvailability(): Promise<{ ok: boolean; error?: string }>;
  probeVectorAvailability(): Promise<boolean>;
  close?(): Promise<void>;
};

export type MemoryPluginRuntime = {
  getMemorySearchManager(params: {
    cfg: unknown;
    agentId: string;
    purpose?: "default" | "status" | "cli";
  }): Promise<{ manager: MemorySearchManager | null; error?: string }>;
  resolveMemoryBackendConfig(params: { cfg: unknown; agentId: string }): { backend: "builtin" };
  closeAllMemorySearchManagers?(): Promise<void>;
};

export type MemoryPluginCapability = {
  promptBuilder?: (params: { availableTools: Set<string> }) => string[];
  runtime?: MemoryPluginRuntime;
};

export type BeforePromptBuildEvent = { prompt?: string; messages?: unknown[] };
export type BeforePromptBuildResult = { prependContext?: string };

export type PluginLogger = {
  info(message: string): void;
  warn(message: string): void;
};

export type OpenClawPluginApi = {
  /** OpenClaw's whole configuration (openclaw.json), as loaded. */
  config?: unknown;
  pluginConfig?: unknown;
  logger: PluginLogger;
  registerMemoryCapability(capability: MemoryPluginCapability): void;
  registerTool(tool: AgentTool, opts?: { name?: string }): void;
  on(
    hookName: "before_prompt_build",
    handler: (
      event: BeforePromptBuildEvent,
    ) => Promise<BeforePromptBuildResult | void> | BeforePromptBuildResult | void,
  ): void;
};

export type PluginEntry = {
  id: string;
  name: string;
  description: string;
  kind: "memory";
  configSchema: Record<string, unknown>;
  register(api: OpenClawPluginApi): void;
};
