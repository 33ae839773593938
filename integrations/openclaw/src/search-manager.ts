/**
 * The memory capability's search manager: OpenClaw's memory search and read over memesh's
 * recall. A memory is addressed as `memesh/<name>` (its path in OpenClaw's terms), so
 * `readFile` reads back exactly what `search` found.
 */

import { MemeshClient } from "./client.js";
import type { MemorySearchManager, MemorySearchResult } from "./host-api.js";
import { type Entity, fenced, memoryLine, observations, oneLine, memoryText } from "./render.js";

export const PATH_PREFIX = "memesh/";
const DEFAULT_RESULTS = 6;

export function memoryPath(entity: Entity): string {
  return PATH_PREFIX + String(entity.name);
}

export async function recall(client: MemeshClient, query: string, limit: number): Promise<Entity[]> {
  const data = await client.call("recall", { query, limit });
  return Array.isArray(data.entities) ? (data.entities as Entity[]) : [];
}

export function toResult(entity: Entity): MemorySearchResult {
  const relevance = entity.match?.relevance;
  return {
    path: memoryPath(entity),
    startLine: 1,
    endLine: Math.max(1, observations(entity).length),
    score: typeof relevance === "number" ? relevance : 0,
    snippet: oneLine(memoryText(entity)),
    source: "memory",
    citation: `[mem:${String(entity.id)}]`,
  };
}

export function createSearchManager(client: MemeshClient): MemorySearchManager {
  return {
    async search(query, opts) {
      const entities = await recall(client, query, opts?.maxResults ?? DEFAULT_RESULTS);
      const minScore = opts?.minScore ?? 0;
      return entities.map(toResult).filter((result) => result.score >= minScore);
    },
    async readFile({ relPath }) {
      const name = relPath.startsWith(PATH_PREFIX) ? relPath.slice(PATH_PREFIX.length) : relPath;
      const entity = (await client.entity(name)) as Entity;
      // Read back as the model will see it: fenced, one line, like a search hit.
      return { path: memoryPath(entity), text: fenced([memoryLine(entity)]) };
    },
    status() {
      return { backend: "builtin", provider: "memesh", sources: ["memory"], custom: { url: client.url } };
    },
    async probeEmbeddingAvailability() {
      // memesh embeds on its own side (or falls back to keyword search): nothing to probe here.
      return (await client.healthy())
        ? { ok: true }
        : { ok: false, error: `memesh at ${client.url} did not answer` };
    },
    async probeVectorAvailability() {
      return client.healthy();
    },
  };
}
