package datasets

// The documented public domains of the built-in datasets, for
// Preprocessing.Scaling "public" (Entry.Domain). Each range and level list
// comes from the dataset's documentation or from a cap declared here
// without looking at the records; where a domain is open-ended the cap is
// a choice, and clipping a record into it is what makes the guarantee hold
// for the raw records (the manifest counts what was clipped). kddcup99,
// twitter and the IPUMS extracts have none: KDD-99's kddcup.names gives
// the categorical attributes (service, flag) as "symbolic" without their
// levels, and the IPUMS plain matrices carry no record of their coding, so
// a spec must declare their domains itself ([data.bounds.NAME],
// [data.levels.NAME]) or keep only documented columns.

// adultDomain: UCI Adult (adult.names, Becker & Kohavi 1996).
//
//   - Levels: the value lists of adult.names, verbatim (workclass's
//     Never-worked occurs in no complete record: its column is all zero).
//   - age [17, 90]: the extraction condition AAGE>16 of adult.names; 90 is
//     the top code of age in the public-use CPS files (a declared cap).
//   - fnlwgt [1, 1e6]: AFNLWGT>1 (adult.names); the upper end is a declared
//     cap on a CPS final weight (people represented by one respondent).
//   - education-num [1, 16]: the code of the 16 education levels of
//     adult.names.
//   - capital-gain, capital-loss [0, 99999]: the five-digit CPS income
//     fields (99,999 is their top code).
//   - hours-per-week [1, 99]: HRSWK>0 (adult.names); the two-digit CPS
//     field (99 is its top code).
var adultDomain = &Domain{
	Ranges: map[string]Range{
		"age":            {17, 90},
		"fnlwgt":         {1, 1e6},
		"education-num":  {1, 16},
		"capital-gain":   {0, 99999},
		"capital-loss":   {0, 99999},
		"hours-per-week": {1, 99},
	},
	Levels: map[string][]string{
		"workclass": {"Private", "Self-emp-not-inc", "Self-emp-inc", "Federal-gov", "Local-gov", "State-gov", "Without-pay", "Never-worked"},
		"education": {"Bachelors", "Some-college", "11th", "HS-grad", "Prof-school", "Assoc-acdm", "Assoc-voc", "9th", "7th-8th",
			"12th", "Masters", "1st-4th", "10th", "Doctorate", "5th-6th", "Preschool"},
		"marital-status": {"Married-civ-spouse", "Divorced", "Never-married", "Separated", "Widowed", "Married-spouse-absent", "Married-AF-spouse"},
		"occupation": {"Tech-support", "Craft-repair", "Other-service", "Sales", "Exec-managerial", "Prof-specialty", "Handlers-cleaners",
			"Machine-op-inspct", "Adm-clerical", "Farming-fishing", "Transport-moving", "Priv-house-serv", "Protective-serv", "Armed-Forces"},
		"relationship": {"Wife", "Own-child", "Husband", "Not-in-family", "Other-relative", "Unmarried"},
		"race":         {"White", "Asian-Pac-Islander", "Amer-Indian-Eskimo", "Other", "Black"},
		"sex":          {"Female", "Male"},
		"native-country": {"United-States", "Cambodia", "England", "Puerto-Rico", "Canada", "Germany", "Outlying-US(Guam-USVI-etc)",
			"India", "Japan", "Greece", "South", "China", "Cuba", "Iran", "Honduras", "Philippines", "Italy", "Poland", "Jamaica",
			"Vietnam", "Mexico", "Portugal", "Ireland", "France", "Dominican-Republic", "Laos", "Ecuador", "Taiwan", "Haiti",
			"Columbia", "Hungary", "Guatemala", "Nicaragua", "Scotland", "Thailand", "Yugoslavia", "El-Salvador", "Trinadad&Tobago",
			"Peru", "Hong", "Holand-Netherlands"},
	},
	Sources: map[string]string{
		"age":            "adult.names: AAGE>16; 90 = CPS top code (declared cap)",
		"fnlwgt":         "adult.names: AFNLWGT>1; 1e6 declared cap",
		"education-num":  "adult.names: code of the 16 education levels",
		"capital-gain":   "five-digit CPS field (top code 99999)",
		"capital-loss":   "five-digit CPS field (top code 99999)",
		"hours-per-week": "adult.names: HRSWK>0; two-digit CPS field (top code 99)",
		"workclass":      "adult.names",
		"education":      "adult.names",
		"marital-status": "adult.names",
		"occupation":     "adult.names",
		"relationship":   "adult.names",
		"race":           "adult.names",
		"sex":            "adult.names",
		"native-country": "adult.names",
	},
}

// magicRadius is the declared camera radius, in mm, of the MAGIC data's
// simulated telescope: a round cap above the 17 m MAGIC telescope's camera
// (a field of view of about 3.5° at a focal length of 17 m is
// 17000·tan(1.75°) ≈ 519 mm from the centre).
const magicRadius = 600

// magicDomain: UCI MAGIC Gamma Telescope (magic04.names, Bock 2004), whose
// attribute list gives the units. Every length is measured in the camera
// plane, so a camera radius Rc = magicRadius (declared) bounds them:
//
//   - fLength, fWidth [0, Rc]: the image's RMS spread along its axes,
//     about its centroid, of light inside a disc of radius Rc.
//   - fSize [0, 6]: log10 of the image's total content; UCI's description
//     says "a total of few hundreds to some 10000 Cherenkov photons get
//     collected" (log10 ≈ 4), and 6 leaves a factor of 100 (declared cap).
//   - fConc, fConc1 [0, 1]: ratios of a part of the content to the whole.
//   - fAsym [−2Rc, 2Rc]: a distance between two points of the camera,
//     projected on an axis.
//   - fM3Long, fM3Trans [−2Rc, 2Rc]: the cube root of a third central
//     moment, at most the largest distance from the centroid.
//   - fAlpha [0, 90]: an angle between two lines, in degrees.
//   - fDist [0, Rc]: the distance of the image's centroid from the camera
//     centre.
var magicDomain = &Domain{
	Ranges: map[string]Range{
		"fLength":  {0, magicRadius},
		"fWidth":   {0, magicRadius},
		"fSize":    {0, 6},
		"fConc":    {0, 1},
		"fConc1":   {0, 1},
		"fAsym":    {-2 * magicRadius, 2 * magicRadius},
		"fM3Long":  {-2 * magicRadius, 2 * magicRadius},
		"fM3Trans": {-2 * magicRadius, 2 * magicRadius},
		"fAlpha":   {0, 90},
		"fDist":    {0, magicRadius},
	},
	Sources: map[string]string{
		"fLength":  "magic04.names [mm]; RMS spread within a camera of declared radius 600 mm",
		"fWidth":   "magic04.names [mm]; RMS spread within a camera of declared radius 600 mm",
		"fSize":    "magic04.names: log10 of the content; UCI: up to some 10000 photons (cap 1e6 declared)",
		"fConc":    "magic04.names: a ratio",
		"fConc1":   "magic04.names: a ratio",
		"fAsym":    "magic04.names [mm]; a distance within a camera of declared diameter 1200 mm",
		"fM3Long":  "magic04.names [mm]; cube root of a third moment within a camera of declared diameter 1200 mm",
		"fM3Trans": "magic04.names [mm]; cube root of a third moment within a camera of declared diameter 1200 mm",
		"fAlpha":   "magic04.names: an angle in [0, 90] degrees",
		"fDist":    "magic04.names [mm]; the centroid within a camera of declared radius 600 mm",
	},
}

// bankDomain: UCI Bank Marketing (bank-names.txt in bank.zip, Moro, Cortez
// & Rita 2014).
//
//   - Levels: the value lists of bank-names.txt, verbatim ("divorced" there
//     means divorced or widowed; month: jan … dec).
//   - age [18, 100]: clients of a bank's term deposits are adults; 100 is a
//     declared cap.
//   - balance [−10000, 100000]: average yearly balance in euros; both ends
//     are declared caps.
//   - day [1, 31]: day of the month.
//   - duration [0, 3600]: seconds of the last call; one hour is a declared
//     cap.
//   - campaign [1, 50]: contacts in this campaign, the last included
//     (bank-names.txt), so ≥ 1; 50 is a declared cap.
//   - pdays [−1, 999]: −1 means not contacted before (bank-names.txt); 999
//     days is a declared cap.
//   - previous [0, 50]: contacts before this campaign; a declared cap.
var bankDomain = &Domain{
	Ranges: map[string]Range{
		"age":      {18, 100},
		"balance":  {-10000, 100000},
		"day":      {1, 31},
		"duration": {0, 3600},
		"campaign": {1, 50},
		"pdays":    {-1, 999},
		"previous": {0, 50},
	},
	Levels: map[string][]string{
		"job": {"admin.", "unknown", "unemployed", "management", "housemaid", "entrepreneur", "student", "blue-collar",
			"self-employed", "retired", "technician", "services"},
		"marital":   {"married", "divorced", "single"},
		"education": {"unknown", "secondary", "primary", "tertiary"},
		"default":   {"yes", "no"},
		"housing":   {"yes", "no"},
		"loan":      {"yes", "no"},
		"contact":   {"unknown", "telephone", "cellular"},
		"month":     {"jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"},
		"poutcome":  {"unknown", "other", "failure", "success"},
	},
	Sources: map[string]string{
		"age":       "adults (18); 100 declared cap",
		"balance":   "euros; [-10000, 100000] declared caps",
		"day":       "bank-names.txt: day of the month",
		"duration":  "bank-names.txt: seconds; 3600 declared cap",
		"campaign":  "bank-names.txt: includes the last contact (>= 1); 50 declared cap",
		"pdays":     "bank-names.txt: -1 = not contacted before; 999 declared cap",
		"previous":  "bank-names.txt: a count; 50 declared cap",
		"job":       "bank-names.txt",
		"marital":   "bank-names.txt",
		"education": "bank-names.txt",
		"default":   "bank-names.txt",
		"housing":   "bank-names.txt",
		"loan":      "bank-names.txt",
		"contact":   "bank-names.txt",
		"month":     "bank-names.txt",
		"poutcome":  "bank-names.txt",
	},
}
