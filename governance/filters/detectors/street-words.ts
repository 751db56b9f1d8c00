/** Word lists of the address detector, lower case (see street-address.ts). */

const words = (s: string): string[] => s.trim().split(/\s+/);

/** After the street's name: "Main St", "Wallaby Way". Abbreviations may take a period. */
export const STREET_TYPES = words(`
  street st avenue ave av road rd boulevard blvd lane ln drive dr way court ct place pl
  terrace ter terr parkway pkwy highway hwy circle cir square sq crescent cres close grove
  gardens row mews walk trail trl alley aly path plaza plz loop pike expressway expy
  freeway fwy quay wharf rise hill esplanade embankment causeway turnpike tpke
`);
/** Full words: the only types accepted after a lower-case street name ("45 elm street"). */
export const STREET_TYPES_SPELLED = words(`
  street avenue road boulevard lane drive way court place terrace parkway highway circle
  square crescent close grove
`);
/** Streets that are their own name: "80 Broadway". */
export const STANDALONE_STREETS = words("broadway bowery strand");

/** Before the street's name: "12 rue de Rivoli", "Calle Mayor 5", "ul. Marszałkowska 10". */
export const STREET_PREFIXES = words(`
  rue avenue boulevard calle via viale piazza corso avenida rua carrer chemin allée allee
  quai strada ul ulica plac
`);
/** Glued to the street's name: "Friedrichstraße 43", "Keizersgracht 123". */
export const GLUED_STREET_TYPES = words(`
  straße strasse str weg gasse allee platz ring damm gracht laan plein kade dijk straat
  vej gade gatan vägen väg veien
`);

/** Before a unit's number or letter: "Apt 4B", "Suite 200", "Flat 3", "Building B". */
export const UNIT_WORDS = words(`
  apt apartment suite ste unit flat floor fl level room rm building bldg dock box
`);

export const DIRECTIONS = words("n s e w ne nw se sw north south east west");

/** US states, DC and Puerto Rico, as postal abbreviations. */
export const US_STATES = words(`
  AL AK AZ AR CA CO CT DE DC FL GA HI ID IL IN IA KS KY LA ME MD MA MI MN MS MO MT NE NV NH NJ
  NM NY NC ND OH OK OR PA RI SC SD TN TX UT VT VA WA WV WI WY PR
`);
export const CA_PROVINCES = words("AB BC MB NB NL NS NT NU ON PE QC SK YT");
export const AU_STATES = words("NSW VIC QLD WA SA TAS ACT NT");
