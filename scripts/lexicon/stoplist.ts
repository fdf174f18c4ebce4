/**
 * Words the lexicon never expands and never expands into: function words, light verbs and
 * vague nouns whose neighbours are noise ("get" → "take", "make"; "thing" → "something").
 */
export const LEXICON_STOPLIST = new Set(
  (
    "a about above across after afterwards again against all almost alone along already also although always am among amongst an and " +
    "another any anybody anyhow anyone anything anyway anywhere are around as at back be became because become becomes becoming been " +
    "before beforehand behind being below beside besides between beyond both but by can cannot could did do does doing done down during " +
    "each either else elsewhere enough etc even ever every everybody everyone everything everywhere except few for former formerly from " +
    "further had has have having he hence her here hereby herein hers herself him himself his how however i if in indeed into is it its " +
    "itself just last latter least less many may me meanwhile might mine more moreover most mostly much must my myself namely neither " +
    "never nevertheless next no nobody none nor not nothing now nowhere of off often on once one only onto or other others otherwise our " +
    "ours ourselves out over own per perhaps please quite rather really same several she should since so some somehow someone something " +
    "sometime sometimes somewhere still such than that the their theirs them themselves then thence there thereafter thereby therefore " +
    "therein these they this those though through throughout thru thus to together too toward towards under until up upon us very via " +
    "was we well were what whatever when whence whenever where whereas wherever whether which while whither who whoever whole whom whose " +
    "why will with within without would yet you your yours yourself yourselves " +
    // light verbs and their forms
    "get gets got getting gotten make makes made making take takes took taken taking put puts putting give gives gave given giving go " +
    "goes went gone going come comes came coming keep keeps kept keeping let lets say says said saying see sees saw seen seeing know " +
    "knows knew known want wants wanted need needs needed use uses used using try tries tried ask asks asked tell tells told seem seems " +
    "look looks looked find finds found think thinks thought mean means meant work works worked happen happens happened able " +
    // vague nouns, adjectives and numbers
    "thing things stuff way ways kind kinds sort lot lots bit time times day days year years week weeks month months people person guy " +
    "good bad new old big small little great sure certain right okay ok yes two three four five six seven eight nine ten first second third " +
    "many much like also anyway actually basically maybe"
  ).split(/\s+/),
);
