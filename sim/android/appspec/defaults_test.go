package appspec

import "testing"

func TestEmbeddedAppsLoad(t *testing.T) {
	t.Parallel()
	apps := DefaultApps()
	want := map[string]bool{"com.android.launcher3": false, "com.example.counter": false, "com.example.login": false,
		"com.example.list": false, "com.alipay.hulu": false, "com.android.adbkeyboard": false}
	for _, a := range apps {
		if _, ok := want[a.Package]; ok {
			want[a.Package] = true
		}
	}
	for pkg, ok := range want {
		if !ok {
			t.Errorf("embedded app %s missing", pkg)
		}
	}
}

// A hand-written spec is one JSON document with no misspelt key: data after
// it or an unknown field fails loudly.
func TestLoadAppRefusesTrailingDataAndUnknownFields(t *testing.T) {
	t.Parallel()
	b, err := embeddedApps.ReadFile("apps/counter.json")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := LoadApp(b); err != nil {
		t.Fatalf("the counter spec: %v", err)
	}
	for _, bad := range [][]byte{append(b, " junk"...), append(b, '}'), append(b, "{}"...), []byte(`{"package":"p","pakage":"x"}`)} {
		if _, err := LoadApp(bad); err == nil {
			t.Errorf("accepted %q", bad[max(0, len(bad)-12):])
		}
	}
}
