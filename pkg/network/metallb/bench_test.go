package metallb

import "testing"

// BenchmarkRender renders MetalLB's objects for the default settings, as every
// reconcile does. Goal: under 2 ms.
func BenchmarkRender(b *testing.B) {
	images, err := ImagesFromEnv(func(string) string { return "" }, "1.0.0")
	if err != nil {
		b.Fatal(err)
	}
	s, err := SettingsFor(Environment{Namespace: DefaultNamespace, Images: images, Webhooks: true}, nil)
	if err != nil {
		b.Fatal(err)
	}
	key := NewMemberlistKey()
	if _, err := Render(s, key); err != nil { // parse the templates outside the loop
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Render(s, key); err != nil {
			b.Fatal(err)
		}
	}
}
