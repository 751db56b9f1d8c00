/**
 * Inputs of the speech scenarios: natural English prose (many sentences,
 * punctuation, numbers) rather than repeated words, so sentence splitting and
 * the content filters do realistic work. No personal data on purpose: the
 * filters scan everything but redact nothing, so both runs of the enforcement
 * scenario send the same bytes upstream.
 */
const PROSE = [
  "The old lighthouse stood at the edge of the harbor for more than a century.",
  "Every evening, the keeper climbed the narrow stairs and lit the great lamp, whatever the weather.",
  "Fishermen coming home in the dark looked for its steady beam long before they could see the shore.",
  "In the winter of 1911, a storm tore the roof from the boathouse and flooded the lower rooms.",
  "The keeper's daughter carried the logbooks upstairs, one armful at a time, while the sea rose around the rocks.",
  "By morning the water had gone down, but the village had changed its mind about the little tower on the point.",
  "People began to visit on Sundays, bringing bread, letters and news from the mainland.",
  "Children were allowed to wind the clockwork that turned the lens, if they promised to count every turn out loud.",
  "Years later, when the light was automated, the town kept the keeper's cottage exactly as it had been.",
  "You can still see the brass telescope by the window and the chart of the bay pinned above the desk.",
  "Visitors often ask why anyone would choose such a lonely life.",
  "The answer, written in faded ink on the first page of the last logbook, is surprisingly simple.",
  "Someone has to keep watch, it says, so that everyone else can sleep.",
  "Today the lighthouse is a small museum, open from April to October, and the lamp is lit once a year.",
  "On that night the whole village walks out along the breakwater to watch the beam sweep across the water again.",
  "Some bring lanterns of their own, and for a few minutes the shore glitters like a second harbor of stars.",
  "Then the lamp is dimmed, the crowd drifts home, and the tower goes back to its quiet work.",
  "Ships no longer need it, of course, because satellites tell every captain exactly where the rocks are.",
  "Still, many sailors admit that they feel better when they see it standing there.",
  "A light that has never failed is hard to ignore, even when you no longer depend on it.",
  "The museum's guide likes to end the tour in the lamp room, high above the water.",
  "From there, on a clear day, you can see three islands, two towns and the long gray line of the coast.",
  "Most people fall silent for a moment before they start down the stairs again.",
  "It is, the guide says, the best view in the county, and it was earned one step at a time.",
].join(" ");

/** About `chars` characters of the prose, cut at a sentence end. */
export function prose(chars: number): string {
  let text = PROSE;
  while (text.length < chars) text = `${text} ${PROSE}`;
  const cut = text.lastIndexOf(".", chars - 1);
  return text.slice(0, cut + 1);
}

/** The 2,000-character input of the embedded-engine scenario. */
export const LONG_INPUT = prose(2_000);
/** A typical short request for the proxy scenarios (~300 characters). */
export const SHORT_INPUT = prose(300);
