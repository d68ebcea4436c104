// The SSRF guard: every spelling of a local or metadata address is classified as what it stands for.
import { describe, expect, it } from "vitest";
import { checkOutboundUrl, classifyHost } from "../../src/lib/url-guard";
import { call, createOrg } from "../helpers";

const hostOf = (url: string) => new URL(url).hostname;

describe("classifyHost (after URL normalization)", () => {
  it.each([
    ["http://169.254.169.254/latest/meta-data", "metadata"],
    ["http://2852039166/", "metadata"], // decimal 169.254.169.254
    ["http://0xa9.0xfe.0xa9.0xfe/", "metadata"],
    ["http://[::ffff:169.254.169.254]/", "metadata"],
    ["http://[fd00:ec2::254]/", "metadata"],
    ["http://metadata.google.internal/", "metadata"],
    ["http://169.254.1.1/", "link_local"],
    ["http://[fe80::1]/", "link_local"],
    ["http://127.0.0.1:8088/", "loopback"],
    ["http://2130706433/", "loopback"],
    ["http://0177.0.0.1/", "loopback"],
    ["http://0x7f000001/", "loopback"],
    ["http://[::1]/", "loopback"],
    ["http://[::ffff:127.0.0.1]/", "loopback"],
    ["http://localhost:8088/", "loopback"],
    ["http://pbx.localhost/", "loopback"],
    ["http://10.1.2.3/", "private"],
    ["http://172.16.0.1/", "private"],
    ["http://172.31.255.255/", "private"],
    ["http://192.168.1.10/", "private"],
    ["http://[fd12:3456::1]/", "private"],
    ["http://[fc00::1]/", "private"],
    ["http://pbx.internal/", "private"],
    ["http://100.64.0.1/", "cgnat"],
    ["http://0.0.0.0/", "unspecified"],
    ["http://[::]/", "unspecified"],
    ["http://224.0.0.1/", "multicast"],
    ["http://[ff02::1]/", "multicast"],
    ["http://255.255.255.255/", "reserved"],
    ["http://[64:ff9b::a9fe:a9fe]/", "metadata"],
    ["http://172.32.0.1/", "public"],
    ["http://100.128.0.1/", "public"],
    ["http://8.8.8.8/", "public"],
    ["http://[2001:db8::1]/", "public"],
    ["https://pbx.example.com:8089/", "public"],
  ])("%s is %s", (url, cls) => {
    expect(classifyHost(hostOf(url))).toBe(cls);
  });
});

describe("checkOutboundUrl", () => {
  it("refuses local addresses unless private ones are allowed; metadata and link-local never", () => {
    expect(checkOutboundUrl("http://10.0.0.5:8088")).toMatchObject({ ok: false, class: "private" });
    expect(checkOutboundUrl("http://10.0.0.5:8088", { allowPrivate: true })).toEqual({ ok: true });
    expect(checkOutboundUrl("http://127.0.0.1:8088", { allowPrivate: true })).toEqual({ ok: true });
    expect(checkOutboundUrl("http://169.254.169.254/", { allowPrivate: true })).toMatchObject({ ok: false, class: "metadata" });
    expect(checkOutboundUrl("http://[fe80::1]/", { allowPrivate: true })).toMatchObject({ ok: false, class: "link_local" });
    expect(checkOutboundUrl("https://edgedial.example.com/x", { ownOrigins: ["https://edgedial.example.com"] })).toMatchObject({ ok: false });
    expect(checkOutboundUrl("https://pbx.example.com:8089")).toEqual({ ok: true });
  });

  it("the service's own origin: scheme default ports filled in (http and ws 80, https and wss 443), other local ports allowed", () => {
    const own = (url: string, origin: string) => checkOutboundUrl(url, { allowPrivate: true, ownOrigins: [null, origin] });
    const self = { ok: false, class: "own_origin" };
    expect(own("ws://10.0.0.2/x", "http://10.0.0.2:80")).toMatchObject(self);
    expect(own("https://10.0.0.2:443", "wss://10.0.0.2")).toMatchObject(self);
    expect(own("http://10.0.0.2:443", "https://10.0.0.2")).toMatchObject(self);
    expect(own("https://10.0.0.2", "http://10.0.0.2")).toEqual({ ok: true });
    expect(own("http://[::1]:8787/", "http://localhost:8787")).toMatchObject(self);
    expect(own("http://127.0.0.2:8088", "http://localhost:8787")).toEqual({ ok: true });
    expect(own("http://10.0.0.2:8787", "http://127.0.0.1:8787")).toEqual({ ok: true });
    expect(own("http://10.0.0.2:8787", "not a url")).toEqual({ ok: true });
  });
});

describe("ari_endpoint", () => {
  it("a metadata or link-local endpoint is a 422 in any spelling; nothing is saved", async () => {
    const org = await createOrg();
    for (const ep of ["http://169.254.169.254:80", "http://2852039166/", "http://[::ffff:169.254.169.254]/", "http://[fe80::1]:8088"]) {
      const res = await call("POST", "/api/v1/organizations/telephony-configs", {
        key: org.key,
        body: { name: `x-${crypto.randomUUID().slice(0, 8)}`, config: { provider: "ari", ari_endpoint: ep, app_name: "a", app_password: "p" } },
      });
      expect(res.status, `${ep}: ${res.text}`).toBe(422);
      expect(res.json.detail[0].loc).toEqual(["body", "config", "ari_endpoint"]);
    }
    const list = await call("GET", "/api/v1/organizations/telephony-configs", { key: org.key });
    expect(list.json.items).toHaveLength(0);
  });
});
