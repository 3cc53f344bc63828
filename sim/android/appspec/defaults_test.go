package appspec

import "testing"

func TestEmbeddedAppsLoad(t *testing.T) {
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
