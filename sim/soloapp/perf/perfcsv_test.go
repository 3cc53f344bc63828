package perf

import (
	"bytes"
	"encoding/hex"
	"regexp"
	"strings"
	"testing"
)

func TestCSVFileNameAndCharsets(t *testing.T) {
	t.Parallel()
	got := csvFileName(perfSeries{name: "全局占用", source: "CPU", unit: "%"}, 1000, 5000)
	if got != "全局占用_CPU_6544bc10cd3c6cc3_1000_5000.csv" {
		t.Errorf("name: %s", got)
	}
	got = csvFileName(perfSeries{name: `a/b:c\d`, source: "Src", unit: "ms"}, 1, 2)
	if got != "a_b_c_d_Src_2a8efd7cd29bee68_1_2.csv" {
		t.Errorf("sanitized name: %s", got)
	}
	long := strings.Repeat("长", 30)
	if n := csvFileName(perfSeries{name: long, source: "X", unit: "u"}, 1, 2); !strings.HasPrefix(n, strings.Repeat("长", 24)+"_X_") {
		t.Errorf("truncation: %s", n)
	}
	for _, tc := range []struct{ text, charset, hex string }{
		{"实时电流", "GBK", "cab5cab1b5e7c1f7"},
		{"帧率(帧)", "gbk", "d6a1c2ca28d6a129"},
		{"应用进程", "GB2312", "d3a6d3c3bdf8b3cc"},
		{"帧率", "UTF-8", "e5b8a7e78e87"},
		{"帧A", "ISO-8859-1", "3f41"},
		{"A", "UTF-16", "feff0041"},
	} {
		if h := hex.EncodeToString(encodeCharset(tc.text, tc.charset)); h != tc.hex {
			t.Errorf("%s in %s: %s, want %s", tc.text, tc.charset, h, tc.hex)
		}
		if tc.charset != "ISO-8859-1" && DecodeCharset(encodeCharset(tc.text, tc.charset), tc.charset) != tc.text {
			t.Errorf("round trip %s %s", tc.text, tc.charset)
		}
	}
	// Every Chinese series and item name has a GBK code.
	for _, k := range []string{"Battery", "CPU", "FPS", "Memory", "Network", "Response", "Status", "Temperature"} {
		it, _ := lookupItem(k)
		for _, s := range seriesFor(k, "com.example.counter", false) {
			if bytes.Contains(encodeCharset(s.name+s.unit+it.zh, "GBK"), []byte("?")) {
				t.Errorf("unmappable in %q", s.name)
			}
		}
	}
	c := csvContent(perfSeries{name: "帧率", unit: "帧", source: "FPS", lo: 48, hi: 60}, 10000, 12500)
	lines := strings.Split(strings.TrimSuffix(c, "\n"), "\n")
	if lines[0] != "RecordTime,帧率(帧),extra,SimpleTime" || len(lines) != 4 ||
		!regexp.MustCompile(`^10000,\d+\.\d+,,0\.0$`).MatchString(lines[1]) || !strings.HasSuffix(lines[3], ",,2.0") {
		t.Errorf("csv: %q", c)
	}
}
