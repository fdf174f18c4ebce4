import { ASSETS, LOGO_SVG } from "./assets";
import { html, raw, type SafeHtml } from "./html";
import type { Session } from "./sessions";

export type Section = "overview" | "ledger" | "top-up" | "keys" | "documents" | "search" | "jurisdictions" | "password";

const NAV: { section: Section; href: string; label: string }[] = [
  { section: "overview", href: "/", label: "Overview" },
  { section: "ledger", href: "/ledger", label: "Ledger" },
  { section: "top-up", href: "/top-up", label: "Top up" },
  { section: "keys", href: "/keys", label: "API keys" },
  { section: "documents", href: "/documents", label: "Documents" },
  { section: "search", href: "/search", label: "Search" },
  { section: "jurisdictions", href: "/jurisdictions", label: "Jurisdictions" },
];

function head(title: string): SafeHtml {
  return html`<!doctype html>
<html lang="en-GB">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} · regkb</title>
<link rel="icon" href="${ASSETS.icon.path}" type="image/svg+xml">
<link rel="stylesheet" href="${ASSETS.css.path}">
</head>`;
}

export interface PageContext {
  session: Session;
  orgName: string;
}

/** The signed-in frame: navigation (not while a one-time password must be replaced), who is signed in, sign-out, and the page's own content. */
export function page(ctx: PageContext, section: Section, title: string, content: SafeHtml): string {
  return html`${head(title)}
<body>
<a class="skip" href="#main">Skip to content</a>
<div class="frame">
  <header class="side">
    <div class="side-top">
      <a class="brand" href="/">${raw(LOGO_SVG)} regkb</a>
      <p class="org">${ctx.orgName}</p>
    </div>
    ${ctx.session.passwordTemporary ? "" : html`<nav aria-label="Dashboard">
      <ul class="nav">
        ${NAV.map((n) => html`<li><a href="${n.href}"${n.section === section ? raw(' aria-current="page"') : ""}>${n.label}</a></li>`)}
      </ul>
    </nav>`}
    <div class="who">
      <span>Signed in as <a href="/password" class="mono">${ctx.session.email}</a></span>
      <form method="post" action="/logout">
        <input type="hidden" name="_csrf" value="${ctx.session.csrfToken}">
        <button class="button small" type="submit">Sign out</button>
      </form>
    </div>
  </header>
  <main id="main" tabindex="-1">
    ${content}
  </main>
</div>
<div id="live" class="sr-only" aria-live="polite"></div>
<script src="${ASSETS.js.path}" defer></script>
</body>
</html>`.value;
}

/** A page without the navigation: sign-in and its errors. */
export function soloPage(title: string, content: SafeHtml): string {
  return html`${head(title)}
<body>
<main id="main" class="solo">
  <div class="card">
    <p class="brand">${raw(LOGO_SVG)} regkb</p>
    ${content}
  </div>
</main>
<script src="${ASSETS.js.path}" defer></script>
</body>
</html>`.value;
}

export function csrfField(session: Session): SafeHtml {
  return html`<input type="hidden" name="_csrf" value="${session.csrfToken}">`;
}

export type NoticeKind = "good" | "warn" | "bad";

/** Service messages start lower-case ("available 8 pence, …"); as a sentence on a page they are capitalised. */
function sentence(text: string | SafeHtml): string | SafeHtml {
  return typeof text === "string" ? text.charAt(0).toUpperCase() + text.slice(1) : text;
}

export function notice(kind: NoticeKind, title: string, text?: string | SafeHtml): SafeHtml {
  const role = kind === "bad" ? "alert" : "status";
  text = text === undefined ? undefined : sentence(text);
  return html`<div class="notice ${kind}" role="${role}"><strong>${title}</strong>${text ? html`<p>${text}</p>` : ""}</div>`;
}
