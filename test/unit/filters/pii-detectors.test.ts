import { expect } from "chai";
import { passesLuhn } from "../../../governance/filters/detectors/credit-card.js";
import { found } from "./found.js";

describe("email filter", () => {
  it("finds addresses with dots, plus tags, subdomains and non-ASCII letters", () => {
    for (const email of [
      "john.doe@example.com",
      "jane+tag@sub.example.co.uk",
      "X_Y%z-1@Mail-Server.IO",
      "josé@exämple.de",
    ]) {
      expect(found("email", `Write to ${email}, thanks.`), email).to.deep.equal([email]);
    }
  });

  it("ignores handles, hosts without a TLD and spelled-out addresses", () => {
    for (const text of [
      "Follow @railgate today",
      "ssh user@localhost",
      "mail name at example dot com",
      "a@b.c is too short",
      "price is 5@ 3.50",
    ]) {
      expect(found("email", text), text).to.deep.equal([]);
    }
  });
});

describe("phone filter", () => {
  it("finds North American, international and national formats", () => {
    for (const phone of [
      "+1 (555) 123-4567",
      "555-123-4567",
      "(555) 123-4567",
      "555.123.4567",
      "1-555-123-4567",
      "9143094996",
      "914-309-4996",
      "914.309.4996",
      "+44 20 7946 0958",
      "+33 1 23 45 67 89",
      "+4915112345678",
      "020 7946 0958",
      "07700 900123",
    ]) {
      expect(found("phone", `Call ${phone} today.`), phone).to.deep.equal([phone]);
    }
  });

  it("ignores plain numbers, years, prices, dates, short locals and card numbers", () => {
    for (const text of [
      "It cost $1,299.99 in 2024.",
      "Order 12345 shipped on 2024-01-15.",
      "Dial 555-1234 for the desk.",
      "Ticket 5551234567 is closed.",
      "Logged at 1700000000 UTC.",
      "Code 9113094996 or 2125114996 is not dialable.",
      "Account 29143094996 and 914309499.",
      "We sold 1,234,567 units.",
      "Card 4111 1111 1111 1111.",
      "Version 1.2.3 or 10.0.0.1",
      "The score was 3-2.",
    ]) {
      expect(found("phone", text), text).to.deep.equal([]);
    }
  });
});

describe("ssn filter", () => {
  it("finds dashed and spaced SSNs", () => {
    expect(found("ssn", "SSN 123-45-6789, or 234 56 7890.")).to.deep.equal([
      "123-45-6789",
      "234 56 7890",
    ]);
    expect(found("ssn", "078-05-1120")).to.deep.equal(["078-05-1120"]);
  });

  it("ignores unissued areas, groups and serials, mixed separators and longer numbers", () => {
    for (const text of [
      "000-12-3456",
      "666-12-3456",
      "912-34-5678",
      "123-00-4567",
      "123-45-0000",
      "123-45 6789",
      "123456789",
      "1123-45-6789",
      "123-45-67890",
      "Call 555-123-4567",
    ]) {
      expect(found("ssn", `id ${text} end`), text).to.deep.equal([]);
    }
  });
});

describe("credit-card filter", () => {
  it("checks Luhn", () => {
    expect(passesLuhn("4111111111111111")).to.equal(true);
    expect(passesLuhn("4111111111111112")).to.equal(false);
    expect(passesLuhn("79927398713")).to.equal(true);
    expect(passesLuhn("79927398710")).to.equal(false);
    expect(passesLuhn("4111-1111")).to.equal(false);
  });

  it("finds Luhn-valid 13-19 digit numbers, grouped or not", () => {
    for (const card of [
      "4111 1111 1111 1111",
      "4111-1111-1111-1111",
      "4111111111111111",
      "5500 0000 0000 0004",
      "3782 822463 10005",
      "4222222222222",
      "6011 0009 9013 9424",
      // Printed as a card (4-4-4-4, one separator, issuer digit 2-6): a card, checksum or not.
      "4265 5256 0839 8752",
      "4265-5256-0839-8752",
      "4111 1111 1111 1112",
    ]) {
      expect(found("credit-card", `Pay with ${card}.`), card).to.deep.equal([card]);
    }
  });

  it("finds a card among other numbers and two cards in a row", () => {
    expect(found("credit-card", "Order 12 4111 1111 1111 1111 ok")).to.deep.equal([
      "4111 1111 1111 1111",
    ]);
    expect(found("credit-card", "4111111111111111 5500000000000004")).to.deep.equal([
      "4111111111111111",
      "5500000000000004",
    ]);
  });

  it("ignores numbers failing Luhn unless printed as a card, wrong lengths and lists of small numbers", () => {
    for (const text of [
      "4111111111111112",
      "4265525608398752",
      "4265 5256-0839 8752",
      "1234 5678 9012 3456",
      "4265 5256 0839 875",
      "411111111111",
      "41111111111111111111",
      "1 2 3 4 5 6 7 8 9 10 11 12 13 14",
      "Call +44 20 7946 0958",
      "3.14159265358979323",
    ]) {
      expect(found("credit-card", `x ${text} y`), text).to.deep.equal([]);
    }
  });
});

describe("ip-address filter", () => {
  it("finds IPv4 with octets up to 255", () => {
    expect(found("ip-address", "Hosts 192.168.1.1, 10.0.0.255 and 0.0.0.0.")).to.deep.equal([
      "192.168.1.1",
      "10.0.0.255",
      "0.0.0.0",
    ]);
  });

  it("finds IPv6 in full, compressed and IPv4-suffixed forms", () => {
    for (const ip of [
      "2001:0db8:85a3:0000:0000:8a2e:0370:7334",
      "2001:db8::1",
      "::1",
      "fe80::1ff:fe23:4567:890a",
      "FE80::",
      "::ffff:192.0.2.1",
      "64:ff9b::192.0.2.33",
    ]) {
      expect(found("ip-address", `addr ${ip} up`), ip).to.deep.equal([ip]);
    }
  });

  it("ignores out-of-range octets, versions, times, MACs and C++ scopes", () => {
    for (const text of [
      "256.1.1.1",
      "1.2.3.4.5",
      "v1.2.3.4",
      "192.168.1",
      "010.1.1.1",
      "std::vector",
      "meet at 10:30:45",
      "00:1A:2B:3C:4D:5E",
      "1:2:3:4:5:6:7:8:9",
      "a :: b",
    ]) {
      expect(found("ip-address", `see ${text} now`), text).to.deep.equal([]);
    }
  });
});
