/**
 * memesh's REST API (`POST /v1/<operation>`, `GET /v1/entities/<name>`), read through its
 * `{success, data}` envelope. A failure keeps memesh's stable `errorCode`.
 *
 * Where memesh is: the plugin's `url` setting, else MEMESH_URL, else the `memesh serve`
 * recorded in MEMESH_HOME/serve.json (as memesh's own CLI finds it), else
 * http://127.0.0.1:3737. The remote token — needed only by a server listening beyond
 * loopback — is the `token` setting, else MEMESH_TOKEN, sent as `Authorization: Bearer`.
 */

import { readFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";

export const DEFAULT_URL = "http://127.0.0.1:3737";
const TIMEOUT_MS = 15_000;

export class MemeshError extends Error {
  constructor(
    readonly errorCode: string,
    message: string,
  ) {
    super(`${errorCode}: ${message}`);
  }

  envelope(): { success: false; errorCode: string; error: string } {
    return { success: false, errorCode: this.errorCode, error: this.message };
  }
}

export type ClientSettings = { url?: string; token?: string };

function recordedUrl(env: NodeJS.ProcessEnv): string | undefined {
  const home = env.MEMESH_HOME || join(homedir(), ".memesh");
  try {
    const record = JSON.parse(readFileSync(join(home, "serve.json"), "utf8")) as {
      host?: unknown;
      port?: unknown;
    };
    if (typeof record.port !== "number") return undefined;
    // A server bound to every address is reached on loopback from this machine.
    const host =
      record.host === "::" || record.host === "::1"
        ? "[::1]"
        : typeof record.host === "string" && record.host !== "0.0.0.0"
          ? record.host
          : "127.0.0.1";
    return `http://${host}:${record.port}`;
  } catch {
    return undefined;
  }
}

export function resolveSettings(
  given: ClientSettings,
  env: NodeJS.ProcessEnv = process.env,
): { url: string; token?: string } {
  const url = (given.url || env.MEMESH_URL || recordedUrl(env) || DEFAULT_URL).replace(/\/+$/, "");
  const token = given.token || env.MEMESH_TOKEN || undefined;
  return token ? { url, token } : { url };
}

export class MemeshClient {
  readonly url: string;
  private readonly token?: string;

  constructor(settings: { url: string; token?: string }) {
    this.url = settings.url;
    this.token = settings.token;
  }

  private async request(method: string, path: string, body?: unknown): Promise<unknown> {
    const headers: Record<string, string> = { Accept: "application/json" };
    if (body !== undefined) headers["Content-Type"] = "application/json";
    if (this.token) headers.Authorization = `Bearer ${this.token}`;
    let response: Response;
    try {
      response = await fetch(this.url + path, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(TIMEOUT_MS),
      });
    } catch (err) {
      throw new MemeshError("transport.unreachable", `memesh at ${this.url} did not answer: ${String(err)}`);
    }
    let answer: unknown;
    try {
      answer = await response.json();
    } catch {
      throw new MemeshError("transport.bad-answer", `memesh at ${this.url} answered something not JSON`);
    }
    if (typeof answer !== "object" || answer === null || !("success" in answer)) {
      throw new MemeshError("transport.bad-answer", "the answer is not memesh's envelope");
    }
    const envelope = answer as { success: boolean; data?: unknown; errorCode?: unknown; error?: unknown };
    if (!envelope.success) {
      throw new MemeshError(String(envelope.errorCode ?? "unknown"), String(envelope.error ?? ""));
    }
    return envelope.data;
  }

  /** One memesh operation (`remember`, `recall`, …): its `data`. */
  async call(operation: string, payload: Record<string, unknown>): Promise<Record<string, unknown>> {
    const data = await this.request("POST", `/v1/${encodeURIComponent(operation)}`, payload);
    return (data ?? {}) as Record<string, unknown>;
  }

  /** One stored memory by name. */
  async entity(name: string): Promise<Record<string, unknown>> {
    const path = name.split("/").map(encodeURIComponent).join("/");
    return ((await this.request("GET", `/v1/entities/${path}`)) ?? {}) as Record<string, unknown>;
  }

  async healthy(): Promise<boolean> {
    try {
      await this.request("GET", "/v1/health");
      return true;
    } catch {
      return false;
    }
  }
}
