import { expect } from "chai";
import nlp from "compromise";
import { found } from "./found.js";

describe("person-name filter", () => {
  it("finds names compromise tags as people, titles included, punctuation excluded", () => {
    expect(found("person-name", "Yesterday John Smith met Dr. Mary O'Brien.")).to.deep.equal([
      "John Smith",
      "Dr. Mary O'Brien",
    ]);
    expect(
      found("person-name", "Angela Merkel visited Berlin and met Emmanuel Macron."),
    ).to.deep.equal(["Angela Merkel", "Emmanuel Macron"]);
    expect(found("person-name", "Thanks, Emily!")).to.deep.equal(["Emily"]);
    expect(found("person-name", "ask jennifer lopez")).to.deep.equal(["jennifer lopez"]);
    expect(found("person-name", "Ms. Jane Doe-Jones signed.")).to.deep.equal([
      "Ms. Jane Doe-Jones",
    ]);
  });

  it("finds a capitalized surname it does not know at a sentence start", () => {
    expect(found("person-name", "Kowalski went home.")).to.deep.equal(["Kowalski"]);
  });

  it("drops words compromise glues onto a name", () => {
    const text = "It was late. 😀 Then Alice went to Paris.";
    expect(found("person-name", text)).to.deep.equal(["Alice"]);
  });

  it("ignores places, companies, months and ordinary sentences", () => {
    for (const text of [
      "The weather in Paris is nice.",
      "Apple released a new iPhone today.",
      "I will go home in May.",
      "Please read the next chapter aloud.",
      "Welcome to the Railgate speech demo.",
    ]) {
      expect(found("person-name", text), text).to.deep.equal([]);
    }
  });

  it("finds what compromise finds on the whole text, though it skips sentences", () => {
    const text = [
      "We reviewed the quarterly numbers and they look good.",
      "Barack Obama spoke first.",
      "Please read the next chapter aloud, slowly and clearly.",
      "I think we should ship next week.",
      "Then Sarah Connor called; Mr. Brown answered.",
      "The report is due on Monday.",
      "obama spoke again.",
    ].join(" ");
    // compromise keeps trailing punctuation in its phrase text; the detector's spans do not.
    const whole = (nlp(text).people().out("array") as string[]).map((p) => p.replace(/[.,;]$/, ""));
    expect(whole).to.deep.equal(["Barack Obama", "Sarah Connor", "Mr. Brown", "obama"]);
    expect(found("person-name", text)).to.deep.equal(whole);
  });
});

describe("address filter", () => {
  it("finds street addresses with their unit, city, state and postcode", () => {
    for (const address of [
      "1600 Pennsylvania Avenue NW, Washington, DC 20500",
      "350 5th Ave, New York, NY 10118",
      "500 Market St, Suite 200, San Francisco, CA 94105",
      "221B Baker Street, London NW1 6XE",
      "10 Downing Street, London SW1A 2AA",
      "42 Wallaby Way",
      "123 Main St, Springfield, IL 62704",
      "77 Sunset Blvd. Apt 4B",
      "9 N Elm Rd",
      "P.O. Box 1234",
      "1 MAIN STREET",
    ]) {
      expect(found("address", `Send it to ${address}. Thanks`), address).to.deep.equal([address]);
    }
  });

  it("finds a city compromise knows before a state and ZIP", () => {
    expect(found("address", "Write to Austin, TX 78701 please")).to.deep.equal([
      "Austin, TX 78701",
    ]);
  });

  it("stops at words after the street that are not a locality", () => {
    expect(found("address", "I live at 5 Main Street, and I like it")).to.deep.equal([
      "5 Main Street",
    ]);
    expect(found("address", "Meet at 12 Oak Lane OR at the park")).to.deep.equal(["12 Oak Lane"]);
  });

  it("ignores place names, streets without numbers and numbers without streets", () => {
    for (const text of [
      "Paris is lovely in spring.",
      "Turn left on Main Street.",
      "We found 5 Big ways to save.",
      "She ran 5 miles down the road.",
      "Chapter 12 covers Washington, DC politics.",
      "The 3 Musketeers were friends.",
      "Springfield, IL 62704",
    ]) {
      expect(found("address", text), text).to.deep.equal([]);
    }
  });
});
