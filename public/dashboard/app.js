// edgedial dashboard: a small single-page app over the public API (/api/v1), served as static assets by the same
// Worker. No build step, no third-party code or requests. The API key lives in sessionStorage only. This file signs
// in and routes; each page is its own module.
import { agentManagement, agentsPage, newAgentPage } from "./agents.js";
import { agentTestRunPage } from "./agent-test-run.js";
import { agentTabs, agentTestsPage } from "./agent-tests.js";
import { newCampaignPage } from "./campaign-new.js";
import { campaignPage, campaignsPage } from "./campaigns.js";
import { ApiError, api, clearError, getKey, h, load, main, nav as navigation, page, setKey, showError, Superseded } from "./core.js";
import { callsPage } from "./calls.js";
import { runPage } from "./run.js";
import { settingsPage } from "./settings.js";
import { agentPage } from "./talk.js";
import { telephonyPage } from "./telephony.js";

const nav = document.getElementById("nav");

function signInPage() {
  nav.hidden = true;
  const input = h("input", {
    id: "api-key",
    name: "api-key",
    type: "password",
    autocomplete: "off",
    required: true,
    spellcheck: "false",
    "aria-describedby": "key-hint",
  });
  const form = h(
    "form",
    {
      onsubmit: async (e) => {
        e.preventDefault();
        const key = input.value.trim();
        try {
          // Any authenticated read proves the key; the API's 401 message is shown as it is.
          await api("/campaign?limit=1", { key });
          setKey(key);
          clearError();
          if (location.hash === "#/campaigns") route();
          else location.hash = "#/campaigns";
        } catch (err) {
          showError(err);
          input.focus();
        }
      },
    },
    h("label", { for: "api-key" }, "API key"),
    input,
    h(
      "p",
      { id: "key-hint", class: "hint" },
      "An edk_… key of your organization. It is kept in this browser tab only and forgotten when you sign out or close it.",
    ),
    h("button", { type: "submit", class: "primary" }, "Sign in"),
  );
  page("Sign in", form);
}

/** Cleanup of the current page (stops its progress source, hangs up a web call). */
let leavePage = () => {};

const ROUTES = [
  [/^\/campaigns\/new$/, () => newCampaignPage()],
  [/^\/campaigns\/(\d+)$/, (m) => campaignPage(Number(m[1]))],
  [/^\/runs\/(\d+)\/(\d+)$/, (m) => runPage(Number(m[1]), Number(m[2]))],
  [/^\/agents\/new$/, () => newAgentPage()],
  [
    /^\/agents\/(\d+)$/,
    async (m) => {
      const leave = await agentPage(Number(m[1]), { main, h, page, load, api, showError });
      main.querySelector("h1").after(agentTabs(Number(m[1]), "overview"));
      await agentManagement(Number(m[1]));
      return leave;
    },
  ],
  [/^\/agents\/(\d+)\/tests$/, (m) => agentTestsPage(Number(m[1]))],
  [/^\/agents\/(\d+)\/tests\/runs\/(\d+)$/, (m) => agentTestRunPage(Number(m[1]), Number(m[2]))],
  [/^\/agents$/, () => agentsPage()],
  [/^\/telephony$/, () => telephonyPage()],
  [/^\/settings$/, () => settingsPage()],
  [/^\/calls$/, () => callsPage()],
];

async function route() {
  navigation.count++;
  leavePage();
  leavePage = () => {};
  if (!getKey()) {
    signInPage();
    return;
  }
  nav.hidden = false;
  const path = location.hash.replace(/^#/, "") || "/campaigns";
  for (const a of nav.querySelectorAll("a")) {
    if (path.startsWith(a.getAttribute("href").slice(1))) a.setAttribute("aria-current", "page");
    else a.removeAttribute("aria-current");
  }
  try {
    const hit = ROUTES.map(([re, render]) => [re.exec(path), render]).find(([m]) => m);
    const leave = hit ? await hit[1](hit[0]) : await campaignsPage();
    if (typeof leave === "function") leavePage = leave;
  } catch (err) {
    if (err instanceof Superseded) return;
    showError(err);
    if (err instanceof ApiError && err.status === 401) {
      // The key stopped working (revoked): back to the sign-in form, the API's message stays visible.
      setKey(null);
      signInPage();
      return;
    }
  }
  main.querySelector("h1")?.focus();
}

document.getElementById("sign-out").addEventListener("click", () => {
  setKey(null);
  clearError();
  leavePage();
  leavePage = () => {};
  if (location.hash && location.hash !== "#/campaigns") location.hash = "#/campaigns";
  else route();
});

window.addEventListener("hashchange", () => {
  clearError();
  route();
});
route();
