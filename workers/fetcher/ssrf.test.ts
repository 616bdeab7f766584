import { describe, expect, it } from "vitest";
import { blockedAddressReason, blockedHostnameReason, ipLiteral } from "./ssrf";

const blocked = [
  "127.0.0.1",
  "127.255.255.254",
  "10.0.0.1",
  "172.16.5.4",
  "192.168.1.1",
  "169.254.169.254",
  "100.64.0.1",
  "100.127.255.255",
  "198.18.0.1",
  "198.19.255.255",
  "0.0.0.0",
  "0.1.2.3",
  "224.0.0.1",
  "255.255.255.255",
  "240.0.0.1",
  "192.0.2.1",
  "::",
  "::1",
  "::ffff:7f00:1",
  "::ffff:127.0.0.1",
  "::ffff:10.0.0.1",
  "::7f00:1",
  "::a9fe:a9fe",
  "64:ff9b::7f00:1",
  "64:ff9b::a9fe:a9fe",
  "2002:7f00:1::",
  "2002:a00:1::1",
  "fc00::1",
  "fd12:3456::1",
  "fe80::1",
  "ff02::1",
  "2001:db8::1",
  "2001::1",
];

const allowed = [
  "93.184.216.34",
  "1.1.1.1",
  "100.63.255.255",
  "100.128.0.0",
  "198.17.255.255",
  "198.20.0.1",
  "2606:4700:4700::1111",
  "::ffff:5db8:d822",
  "64:ff9b::5db8:d822",
  "2002:5db8:d822::1",
];

describe("blockedAddressReason", () => {
  it.each(blocked)("refuses %s", (address) => {
    expect(blockedAddressReason(address)).not.toBeNull();
  });
  it.each(allowed)("allows %s", (address) => {
    expect(blockedAddressReason(address)).toBeNull();
  });
  it("refuses what is not an address", () => {
    expect(blockedAddressReason("example.com")).not.toBeNull();
  });
});

describe("odd spellings, canonicalised by the URL parser first", () => {
  it.each([
    ["http://127.1/", "127.0.0.1"],
    ["http://0x7f.0.0.1/", "127.0.0.1"],
    ["http://2130706433/", "127.0.0.1"],
    ["http://017700000001/", "127.0.0.1"],
    ["http://[::ffff:7f00:1]/", "::ffff:7f00:1"],
    ["http://[::1]:8080/", "::1"],
    ["http://0/", "0.0.0.0"],
  ])("%s is the literal %s and refused", (raw, literal) => {
    const host = ipLiteral(new URL(raw));
    expect(host).toBe(literal);
    expect(blockedAddressReason(host as string)).not.toBeNull();
  });
  it("a name is not a literal", () => {
    expect(ipLiteral(new URL("http://example.com/"))).toBeNull();
  });
});

describe("blockedHostnameReason", () => {
  it.each([
    "metadata.google.internal",
    "METADATA.GOOGLE.INTERNAL.",
    "localhost",
    "a.localhost",
    "metadata",
    "instance-data",
  ])("refuses %s", (name) => {
    expect(blockedHostnameReason(name)).not.toBeNull();
  });
  it("allows ordinary names", () => {
    expect(blockedHostnameReason("feeds.bbci.co.uk")).toBeNull();
  });
});
