package datasets

import "fmt"

// Record layouts. Column names follow the UCI documentation of each file.

// adult.data: 15 fields separated by ", ", no header, income label last;
// records with a '?' field (missing value) are dropped.
var adultFormat = &format{
	sep:       ',',
	trimSpace: true,
	missing:   "?",
	attrs: []attribute{
		{"age", numericAttr},
		{"workclass", categoricalAttr},
		{"fnlwgt", numericAttr},
		{"education", categoricalAttr},
		{"education-num", numericAttr},
		{"marital-status", categoricalAttr},
		{"occupation", categoricalAttr},
		{"relationship", categoricalAttr},
		{"race", categoricalAttr},
		{"sex", categoricalAttr},
		{"capital-gain", numericAttr},
		{"capital-loss", numericAttr},
		{"hours-per-week", numericAttr},
		{"native-country", categoricalAttr},
	},
	target:    "income",
	labels:    map[string]float64{">50K": 1, "<=50K": -1},
	labelDesc: `">50K" or "<=50K"`,
}

// magic04.data: 10 numeric features and the class g/h, comma-separated.
var magicFormat = &format{
	sep: ',',
	attrs: numericAttrs("fLength", "fWidth", "fSize", "fConc", "fConc1",
		"fAsym", "fM3Long", "fM3Trans", "fAlpha", "fDist"),
	target:    "class",
	labels:    map[string]float64{"g": 1, "h": -1},
	labelDesc: `"g" or "h"`,
}

// kddcup.data_10_percent: 41 features and a label ending in '.'. Fields 2-4
// (protocol_type, service, flag) are categorical. The label must be one of
// the 23 classes of the training data: "normal." → −1, any attack → +1.
var kddFormat = &format{
	sep: ',',
	attrs: func() []attribute {
		names := []string{"duration", "protocol_type", "service", "flag", "src_bytes",
			"dst_bytes", "land", "wrong_fragment", "urgent", "hot", "num_failed_logins",
			"logged_in", "num_compromised", "root_shell", "su_attempted", "num_root",
			"num_file_creations", "num_shells", "num_access_files", "num_outbound_cmds",
			"is_host_login", "is_guest_login", "count", "srv_count", "serror_rate",
			"srv_serror_rate", "rerror_rate", "srv_rerror_rate", "same_srv_rate",
			"diff_srv_rate", "srv_diff_host_rate", "dst_host_count", "dst_host_srv_count",
			"dst_host_same_srv_rate", "dst_host_diff_srv_rate", "dst_host_same_src_port_rate",
			"dst_host_srv_diff_host_rate", "dst_host_serror_rate", "dst_host_srv_serror_rate",
			"dst_host_rerror_rate", "dst_host_srv_rerror_rate"}
		a := numericAttrs(names...)
		for i := 1; i <= 3; i++ {
			a[i].kind = categoricalAttr
		}
		return a
	}(),
	target:    "label",
	labels:    kddLabels(),
	labelDesc: `"normal." or one of the 22 attack classes of the training data, e.g. "smurf."`,
}

func kddLabels() map[string]float64 {
	// The 23 classes of kddcup.data_10_percent (docs/datasets.md, kddcup99:
	// 23 distinct labels in the pinned file).
	attacks := []string{"back", "buffer_overflow", "ftp_write", "guess_passwd", "imap",
		"ipsweep", "land", "loadmodule", "multihop", "neptune", "nmap", "perl", "phf",
		"pod", "portsweep", "rootkit", "satan", "smurf", "spy", "teardrop",
		"warezclient", "warezmaster"}
	m := map[string]float64{"normal.": -1}
	for _, a := range attacks {
		m[a+"."] = 1
	}
	return m
}

// bank-full.csv: ';'-separated, text in double quotes, one header line.
// "unknown" is kept as an ordinary level.
var bankFormat = &format{
	sep:    ';',
	quoted: true,
	header: true,
	attrs: []attribute{
		{"age", numericAttr},
		{"job", categoricalAttr},
		{"marital", categoricalAttr},
		{"education", categoricalAttr},
		{"default", categoricalAttr},
		{"balance", numericAttr},
		{"housing", categoricalAttr},
		{"loan", categoricalAttr},
		{"contact", categoricalAttr},
		{"day", numericAttr},
		{"month", categoricalAttr},
		{"duration", numericAttr},
		{"campaign", numericAttr},
		{"pdays", numericAttr},
		{"previous", numericAttr},
		{"poutcome", categoricalAttr},
	},
	target:    "y",
	labels:    map[string]float64{"yes": 1, "no": -1},
	labelDesc: `"yes" or "no"`,
}

// twitterFamilies are the 11 feature families of the Buzz Twitter set, each
// observed at 7 time steps; the file stores them family-major (NCD_0 …
// NCD_6, AI_0 …), then the target.
var twitterFamilies = []string{"NCD", "AI", "AS(NA)", "BL", "NAC", "AS(NAC)", "CS", "AT", "NA", "ADL", "NAD"}

// Twitter.data: 77 numeric features and the numeric target, comma-separated,
// no header.
var twitterFormat = &format{
	sep: ',',
	attrs: func() []attribute {
		var names []string
		for _, f := range twitterFamilies {
			for t := 0; t < 7; t++ {
				names = append(names, fmt.Sprintf("%s_%d", f, t))
			}
		}
		return numericAttrs(names...)
	}(),
	target: "Annotation",
}

// ipumsFormat returns the plain-matrix layout of an IPUMS extract with d
// coded features: one record per line, d numbers (integers in practice;
// any finite decimal is accepted) separated by runs of spaces or tabs, then
// the 0/1 label, no header. The coding of the columns (which are one-hot
// blocks, which are small integers) is not recorded with the extracts, so
// the features are named f1 … fd in file order. Label 1 → +1, 0 → −1.
func ipumsFormat(d int) *format {
	names := make([]string, d)
	for j := range names {
		names[j] = fmt.Sprintf("f%d", j+1)
	}
	return &format{
		whitespace: true,
		attrs:      numericAttrs(names...),
		target:     "label",
		labels:     map[string]float64{"1": 1, "0": -1},
		labelDesc:  `"0" or "1"`,
	}
}

var (
	ipumsUSFormat = ipumsFormat(ipumsUSDim)
	ipumsBRFormat = ipumsFormat(ipumsBRDim)
)
