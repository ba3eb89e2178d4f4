import { type ReactNode, useEffect, useState } from "react";
import { type ApiError, api } from "./api";
import { useT } from "./i18n";

interface ConsoleStatus {
  plugins: Array<{ name: string; version: string; description: string | null }>;
  models: Array<{ name: string; provider?: string; model?: string }>;
}
interface McpStatus {
  servers: Array<{ name: string; transport: string; state: string; tool_count: number; last_error: string | null }>;
}

export function Status(): ReactNode {
  const t = useT();
  const [status, setStatus] = useState<ConsoleStatus | null>(null);
  const [mcp, setMcp] = useState<McpStatus | "absent" | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    api<ConsoleStatus>("/console/status")
      .then(setStatus)
      .catch((e: Error) => setError(e.message));
    api<McpStatus>("/mcp/config")
      .then(setMcp)
      .catch((e: ApiError) => setMcp(e.status === 404 ? "absent" : null));
  }, []);
  return (
    <main className="page status">
      <h1>{t("status.title")}</h1>
      {error ? <p role="alert">{error}</p> : null}
      <section aria-label={t("status.models")}>
        <h2>{t("status.models")}</h2>
        <ul>
          {(status?.models ?? []).map((m) => (
            <li key={m.name}>
              <strong>{m.name}</strong> <span className="muted">{[m.provider, m.model].filter(Boolean).join(" · ")}</span>
            </li>
          ))}
        </ul>
      </section>
      <section aria-label={t("status.plugins")}>
        <h2>{t("status.plugins")}</h2>
        <ul>
          {(status?.plugins ?? []).map((p) => (
            <li key={p.name}>
              <strong>{p.name}</strong> {p.version} <span className="muted">{p.description ?? ""}</span>
            </li>
          ))}
        </ul>
      </section>
      <section aria-label={t("status.mcp")}>
        <h2>{t("status.mcp")}</h2>
        {mcp === "absent" ? <p className="muted">{t("status.mcpAbsent")}</p> : null}
        {mcp && mcp !== "absent" ? (
          <ul>
            {mcp.servers.map((s) => (
              <li key={s.name}>
                <strong>{s.name}</strong> ({s.transport}) — {s.state}, {t("status.mcpTools", { count: s.tool_count })}
                {s.last_error ? ` — ${s.last_error}` : ""}
              </li>
            ))}
            {mcp.servers.length === 0 ? <li className="muted">{t("status.noServers")}</li> : null}
          </ul>
        ) : null}
      </section>
    </main>
  );
}
