// console-test.mjs — the web console in a real browser: Debian's
// chromium, driven by puppeteer-core over the DevTools protocol, checked
// with axe-core (tests/scenario/t0115-console.sh sets the scene).
//
// usage: node console-test.mjs   with TS_URL, TS_APP, TS_SECRET,
//        TS_READER, TS_READER_SECRET, SPOOL, ARTIFACTS, CHROMIUM,
//        GO_FILE set
//
// Prints TAP lines ("ok N - ..." / "not ok N - ...") and exits 1 when one
// fails.  Screenshots of every page go to ARTIFACTS/<name>.png.  The
// expected values are the scene's (t0115 names them): the hostile task
// name and hook output, the attempts of a task that failed once, the
// lines a slow hook writes, a cancel that must end in cancelled/.
import fs from "node:fs";
import path from "node:path";
import { createRequire } from "node:module";
import puppeteer from "puppeteer-core";

const require = createRequire(import.meta.url);
const AXE = require.resolve("axe-core/axe.min.js");
const env = (k) => {
  if (!process.env[k]) throw new Error(`${k} is not set`);
  return process.env[k];
};
const URL = env("TS_URL"), SPOOL = env("SPOOL"), ART = env("ARTIFACTS");
let n = 0, failed = 0;

function tap(ok, what, detail) {
  n++;
  console.log(`${ok ? "ok" : "not ok"} ${n} - ${what}`);
  if (!ok) {
    failed++;
    if (detail) console.log("# " + String(detail).split("\n").join("\n# "));
  }
}

async function check(what, fn) {
  try {
    const r = await fn();
    tap(r === true, what, r === true ? "" : String(r));
  } catch (e) {
    tap(false, what, e && e.stack ? e.stack : e);
  }
}

// axe-core on the page: no violation of impact serious or critical.
async function axe(page, name) {
  await page.addScriptTag({ path: AXE });
  const r = await page.evaluate(async () => {
    // eslint-disable-next-line no-undef
    const res = await axe.run(document, { resultTypes: ["violations"] });
    return res.violations.map((v) => ({ id: v.id, impact: v.impact,
      nodes: v.nodes.map((x) => x.target.join(" ")).slice(0, 3) }));
  });
  const bad = r.filter((v) => v.impact === "serious" ||
                              v.impact === "critical");
  return bad.length === 0 ? true :
    `${name}: ${JSON.stringify(bad)}`;
}

async function shot(page, name) {
  await page.screenshot({ path: path.join(ART, name + ".png"),
                          fullPage: true });
}

const text = (page) => page.evaluate(() => document.body.innerText);

async function login(page, app, secret) {
  await page.goto(URL + "/console/", { waitUntil: "load" });
  await page.type("#app", app);
  await page.type("#secret", secret);
  await Promise.all([page.waitForNavigation({ waitUntil: "load" }),
                     page.click("button[type=submit]")]);
}

fs.mkdirSync(ART, { recursive: true });
const browser = await puppeteer.launch({
  executablePath: env("CHROMIUM"),
  headless: true,
  args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"],
});
try {
  const page = await browser.newPage();
  // axe is injected by the test; the console's own CSP forbids that.
  await page.setBypassCSP(true);
  const dialogs = [];
  page.on("dialog", async (d) => { dialogs.push(d.message()); await d.dismiss(); });

  await check("without a session /console/ leads to the login form", async () => {
    await page.goto(URL + "/console/", { waitUntil: "load" });
    const ok = page.url().endsWith("/console/login") &&
      (await page.$("#secret")) !== null;
    await shot(page, "01-login");
    return ok || `at ${page.url()}`;
  });
  await check("login page: no serious accessibility violation", () => axe(page, "login"));
  await check("a wrong secret is refused", async () => {
    await page.type("#app", env("TS_APP"));
    await page.type("#secret", "not-the-secret-at-all");
    await Promise.all([page.waitForNavigation(), page.click("button[type=submit]")]);
    const t = await text(page);
    return /wrong AppSecret/.test(t) || t;
  });
  await check("log in: the overview shows the node and the leader", async () => {
    await login(page, env("TS_APP"), env("TS_SECRET"));
    const t = await text(page);
    await shot(page, "02-overview");
    return (/Overview/.test(t) && /n1\s+live\s+yes/.test(t)) || t;
  });
  await check("the session cookie is HttpOnly, Secure, SameSite=Strict", async () => {
    const c = (await page.cookies()).find((x) => x.name === "ts_console");
    return (c && c.httpOnly && c.secure && c.sameSite === "Strict" &&
            c.path === "/console") || JSON.stringify(c);
  });
  await check("overview: no serious accessibility violation", () => axe(page, "overview"));
  await check("tasks: the hostile name is shown as text, no script ran", async () => {
    await page.goto(URL + "/console/tasks", { waitUntil: "load" });
    await shot(page, "03-tasks");
    const t = await text(page);
    const pwned = await page.evaluate(() => window.__pwned);
    return (t.includes("<script>window.__pwned=1</script>") &&
            pwned === undefined && dialogs.length === 0) ||
      `pwned=${pwned} dialogs=${dialogs} text=${t}`;
  });
  await check("tasks: no serious accessibility violation", () => axe(page, "tasks"));
  await check("a finished task: both attempts, node, exit, and its output", async () => {
    await page.goto(URL + "/console/tasks/flaky-1", { waitUntil: "load" });
    await shot(page, "04-task-finished");
    const rows = await page.$$eval("table", (ts) => {
      const t = ts.find((x) => x.innerText.includes("Outcome"));
      return t ? [...t.querySelectorAll("tbody tr")].map((r) =>
        [...r.cells].map((c) => c.innerText)) : [];
    });
    const t = await text(page);
    return (rows.length === 2 && rows[0][0] === "1" && rows[0][1] === "n1" &&
            rows[0][4] === "3" && rows[1][0] === "2" && rows[1][4] === "0" &&
            t.includes("SUCCESS") && t.includes("try 2")) ||
      JSON.stringify(rows) + "\n" + t;
  });
  await check("task page: no serious accessibility violation", () => axe(page, "task"));
  await check("hook output with an escape sequence renders inert", async () => {
    await page.goto(URL + "/console/tasks/hostile-1", { waitUntil: "load" });
    await shot(page, "05-task-hostile");
    const pre = await page.$$eval("pre", (ps) => ps.map((p) => p.innerText));
    const pwned = await page.evaluate(() => window.__pwned);
    const bold = await page.$$eval("pre b", (b) => b.length);
    return (pre.some((p) => p.includes("\u241b[31mred") &&
                     p.includes("<b>bold</b>")) && bold === 0 &&
            pwned === undefined) || JSON.stringify(pre);
  });
  await check("following a running task: its log grows as the page reloads", async () => {
    await page.goto(URL + "/console/tasks/slow-1", { waitUntil: "load" });
    const first = (await text(page));
    fs.writeFileSync(env("GO_FILE"), "");	// the hook goes on
    const t0 = Date.now();
    let t = first;
    while (Date.now() - t0 < 20000 && !t.includes("line 3")) {
      await page.waitForNavigation({ timeout: 5000 }).catch(() => {});
      t = await text(page);
    }
    await shot(page, "06-task-running");
    return (first.includes("RUNNING") && first.includes("line 1") &&
            !first.includes("line 3") && t.includes("line 3")) ||
      `first=${first}\nlast=${t}`;
  });
  await check("cancel through the console: CANCELLED in the spool", async () => {
    await page.goto(URL + "/console/tasks/slow-1", { waitUntil: "load" });
    await Promise.all([page.waitForNavigation({ waitUntil: "load" }),
                       page.click("button.danger")]);
    let t = await text(page);
    const t0 = Date.now();
    while (!t.includes("CANCELLED") && Date.now() - t0 < 10000) {
      await new Promise((r) => setTimeout(r, 300));
      await page.reload({ waitUntil: "load" });
      t = await text(page);
    }
    await shot(page, "07-task-cancelled");
    const inSpool = fs.existsSync(path.join(SPOOL, "cancelled", "slow-1.json"));
    return (t.includes("CANCELLED") && inSpool) || `inSpool=${inSpool} ${t}`;
  });
  await check("jobs: the next fires in the zone and UTC; accessible", async () => {
    await page.goto(URL + "/console/jobs", { waitUntil: "load" });
    await shot(page, "08-jobs");
    const t = await text(page);
    if (!(t.includes("2030-01-07T12:00:00+01:00 (2030-01-07T11:00:00Z)") &&
          t.includes("forbid") && t.includes("fire_once")))
      return t;
    return axe(page, "jobs");
  });
  await check("a form without the CSRF token is refused", async () => {
    const st = await page.evaluate(async () => {
      const r = await fetch("/console/tasks/flaky-1/retry", { method: "POST",
        headers: { "Content-Type": "application/x-www-form-urlencoded" },
        body: "csrf=" + "0".repeat(64) });
      return r.status;
    });
    return st === 403 || `status ${st}`;
  });
  await check("log out: the session ends", async () => {
    await Promise.all([page.waitForNavigation({ waitUntil: "load" }),
                       page.click("header button[type=submit]")]);
    await page.goto(URL + "/console/tasks", { waitUntil: "load" });
    return page.url().endsWith("/console/login") || page.url();
  });
  await check("a read-only app sees tasks but has no action buttons", async () => {
    await login(page, env("TS_READER"), env("TS_READER_SECRET"));
    await page.goto(URL + "/console/tasks/flaky-1", { waitUntil: "load" });
    await shot(page, "09-read-only");
    const buttons = await page.$$eval("main button", (b) => b.length);
    const t = await text(page);
    return (buttons === 0 && t.includes("flaky-1")) || `buttons=${buttons}`;
  });
} finally {
  await browser.close();
}
console.log(`1..${n}`);
process.exit(failed ? 1 : 0);
