import { expect } from "chai";
import { tokensOf } from "../../../governance/filters/detectors/tokens.js";
import { found } from "./found.js";

describe("person-name filter", () => {
  it("finds full names with their titles, punctuation excluded", () => {
    expect(found("person-name", "Yesterday John Smith met Dr. Mary O'Brien.")).to.deep.equal([
      "John Smith",
      "Dr. Mary O'Brien",
    ]);
    expect(
      found("person-name", "Angela Merkel visited Berlin and met Emmanuel Macron."),
    ).to.deep.equal(["Angela Merkel", "Emmanuel Macron"]);
    expect(found("person-name", "Ms. Jane Doe-Jones signed.")).to.deep.equal([
      "Ms. Jane Doe-Jones",
    ]);
    expect(found("person-name", "Mr Singh paid; ask Mrs. Henderson.")).to.deep.equal([
      "Mr Singh",
      "Mrs. Henderson",
    ]);
  });

  it("names no one in a chain of particles alone (it used to throw)", () => {
    expect(found("person-name", "Der alte Leuchtturm stand.")).to.deep.equal([]);
  });

  it("keeps particles, initials and suffixes inside a name, and a possessive outside", () => {
    expect(found("person-name", "Ludwig van Beethoven and John F. Kennedy Jr. met.")).to.deep.equal(
      ["Ludwig van Beethoven", "John F. Kennedy Jr."],
    );
    expect(found("person-name", "We borrowed Tom Baker's scarf and Lucia’s pen.")).to.deep.equal([
      "Tom Baker",
      "Lucia",
    ]);
  });

  it("finds a capitalized name it knows at a sentence start, and names of many origins", () => {
    expect(found("person-name", "Kowalski went home.")).to.deep.equal(["Kowalski"]);
    expect(
      found("person-name", "Priya Raman, Hiroshi Tanaka and Oluwaseun Adeyemi joined."),
    ).to.deep.equal(["Priya Raman", "Hiroshi Tanaka", "Oluwaseun Adeyemi"]);
  });

  it("tells given names that are words from the words", () => {
    expect(found("person-name", "Will Turner left. Will you stay?")).to.deep.equal(["Will Turner"]);
    expect(found("person-name", "I hope Will remembers; we hope so.")).to.deep.equal(["Will"]);
    expect(found("person-name", "The price rose. I gave it to Rose.")).to.deep.equal(["Rose"]);
    expect(found("person-name", "Mark the date. Ask Mark.")).to.deep.equal(["Mark"]);
    expect(found("person-name", "Summer is busy. Summer Evans teaches.")).to.deep.equal([
      "Summer Evans",
    ]);
    expect(found("person-name", "Faith and Victor drove. The victor won.")).to.deep.equal([
      "Faith",
      "Victor",
    ]);
  });

  it("takes a month for a name only before a surname", () => {
    expect(found("person-name", "May Chen will lead it in May.")).to.deep.equal(["May Chen"]);
    expect(found("person-name", "April showers bring May flowers.")).to.deep.equal([]);
  });

  it("accepts an unknown word after a cue", () => {
    expect(found("person-name", "My name is Tariq.")).to.deep.equal(["Tariq"]);
    expect(found("person-name", "Regards, Tomasz Wiśniewski")).to.deep.equal(["Tomasz Wiśniewski"]);
    expect(found("person-name", "Hi, I'm Keisha and I'll guide you.")).to.deep.equal(["Keisha"]);
  });

  it("reads names in capitals and in lower case from the lists alone", () => {
    expect(found("person-name", "JOHN SMITH WILL CALL YOU TOMORROW.")).to.deep.equal([
      "JOHN SMITH",
    ]);
    expect(found("person-name", "PLEASE READ THE INSTRUCTIONS CAREFULLY.")).to.deep.equal([]);
    expect(found("person-name", "ask jennifer lopez, not the will of others")).to.deep.equal([
      "jennifer lopez",
    ]);
  });

  it("drops words a sentence start capitalizes, symbols in between", () => {
    expect(found("person-name", "It was late. 😀 Then Alice went to Paris.")).to.deep.equal([
      "Alice",
    ]);
  });

  it("ignores places, companies, months, institutions and ordinary sentences", () => {
    for (const text of [
      "The weather in Paris is nice.",
      "Apple released a new iPhone today.",
      "I will go home in May.",
      "Please read the next chapter aloud.",
      "Welcome to the Railgate speech demo.",
      "The Kennedy Space Center is near Orlando.",
      "Victoria Station and the Lincoln Memorial were crowded.",
      "Mount Everest and San Francisco are far apart.",
      "Stanford University and MIT announced it.",
      "Penny Lane is a song by the Beatles.",
    ]) {
      expect(found("person-name", text), text).to.deep.equal([]);
    }
  });

  it("does not take a street or city inside an address for a person", () => {
    expect(
      found("person-name", "Robert Brown, 1500 Lincoln Street, Denver, CO 80203, called."),
    ).to.deep.equal(["Robert Brown"]);
    expect(found("person-name", "Post it to 14 Rose Close, Leeds LS6 2QB.")).to.deep.equal([]);
  });

  it("finds names in the sentences of a longer text", () => {
    const text = [
      "We reviewed the quarterly numbers and they look good.",
      "Barack Obama spoke first.",
      "Please read the next chapter aloud, slowly and clearly.",
      "I think we should ship next week.",
      "Then Sarah Connor called; Mr. Brown answered.",
      "The report is due on Monday.",
    ].join(" ");
    expect(found("person-name", text)).to.deep.equal(["Barack Obama", "Sarah Connor", "Mr. Brown"]);
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
      "4410 Oak Court #12, Denver, CO 80203",
      "100 King Street West, Toronto, ON M5X 1A9",
      "120 George Street, Sydney NSW 2000",
      "12-14 Harbour Square",
      "80 Broadway",
    ]) {
      expect(found("address", `Send it to ${address}. Thanks`), address).to.deep.equal([address]);
    }
  });

  it("finds European forms: number after the street, postcode before the city", () => {
    for (const address of [
      "Friedrichstraße 43, 10117 Berlin",
      "12 rue de Rivoli, 75001 Paris",
      "Calle Mayor 5, 28013 Madrid",
      "Keizersgracht 123, 1015 CJ Amsterdam",
      "ul. Marszałkowska 10, 00-590 Warszawa",
    ]) {
      expect(found("address", `Write to ${address}, please`), address).to.deep.equal([address]);
    }
  });

  it("finds a unit before the street, rural routes and lower-case streets", () => {
    expect(found("address", "Send it to Flat 3, 27 Kings Road, London SW3 4RP.")).to.deep.equal([
      "Flat 3, 27 Kings Road, London SW3 4RP",
    ]);
    expect(found("address", "The farm is on Rural Route 2, Box 17.")).to.deep.equal([
      "Rural Route 2, Box 17",
    ]);
    expect(found("address", "he lives at 45 elm street near the school")).to.deep.equal([
      "45 elm street",
    ]);
  });

  it("finds a locality alone or after an unnumbered street only with a postcode", () => {
    // Any city before ", ST 12345" now (compromise knew Austin but not Springfield).
    expect(found("address", "Write to Austin, TX 78701 please")).to.deep.equal([
      "Austin, TX 78701",
    ]);
    expect(found("address", "Springfield, IL 62704")).to.deep.equal(["Springfield, IL 62704"]);
    expect(found("address", "We live on Main Street, Springfield, IL 62704.")).to.deep.equal([
      "Main Street, Springfield, IL 62704",
    ]);
    expect(found("address", "45 Deansgate, Manchester M3 2AY")).to.deep.equal([
      "45 Deansgate, Manchester M3 2AY",
    ]);
  });

  it("takes a city after the street when it ends the sentence, not a clause", () => {
    expect(found("address", "She lives at 742 Evergreen Terrace, Springfield.")).to.deep.equal([
      "742 Evergreen Terrace, Springfield",
    ]);
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
      "There are 40 Court cases and 300 Avenue sneakers.",
      "Ford recalled 20,000 Main Street trucks.",
      "The store on the corner of Fifth Avenue and 57th Street is closed.",
    ]) {
      expect(found("address", text), text).to.deep.equal([]);
    }
  });
});

describe("detector tokens", () => {
  it("keeps names, numbers and postcodes whole and marks possessives and capitals", () => {
    const tokens = tokensOf("O'Brien's flat: 221B, 12-14 Doe-Jones St. SW1A");
    expect(tokens.map((t) => t.text)).to.deep.equal([
      "O'Brien's",
      "flat",
      ":",
      "221B",
      ",",
      "12-14",
      "Doe-Jones",
      "St",
      ".",
      "SW1A",
    ]);
    const first = tokens[0];
    expect(first?.lower).to.equal("o'brien");
    expect(first?.stem).to.equal("O'Brien".length);
    expect(tokens[8]?.spaced).to.equal(false);
  });

  it("scans a long run of capitalized words and numbers once, whatever it holds", () => {
    // Every word could start a name and every number an address: the answer still comes in one pass.
    const text = `${"Mary Ann 12 Oak ".repeat(5_000)}Lane`;
    expect(found("address", text)).to.have.length(1);
    expect(found("person-name", text).length).to.be.above(0);
  });
});
