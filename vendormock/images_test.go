package vendormock

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func setImageEnv(t *testing.T, kv map[string]string) {
	t.Helper()
	for _, k := range []string{EnvImageRabbitMQ, EnvImageNginx, EnvImageWireMock, EnvImageToxiproxy, EnvImageWorker, EnvPostgresImage, EnvImagesKind} {
		t.Setenv(k, kv[k])
	}
}

func TestImagesFromEnv(t *testing.T) {
	setImageEnv(t, map[string]string{EnvImageRabbitMQ: "r:1", EnvImageToxiproxy: "t:1", EnvImagesKind: "offline"})
	_, err := ImagesFromEnv()
	if !errors.Is(err, ErrImagesMissing) {
		t.Fatalf("err = %v, want ErrImagesMissing", err)
	}
	for _, want := range []string{EnvImageNginx, EnvImageWireMock, "./run.sh"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("err = %v, want it to name %s", err, want)
		}
	}
	if strings.Contains(err.Error(), EnvImageRabbitMQ) || strings.Contains(err.Error(), EnvImageWorker) {
		t.Errorf("err = %v names a variable that is set or optional", err)
	}

	setImageEnv(t, map[string]string{EnvImageRabbitMQ: "r:1", EnvImageNginx: "n:1", EnvImageWireMock: "w:1", EnvImageToxiproxy: "t:1", EnvImagesKind: "offline"})
	im, err := ImagesFromEnv()
	if err != nil {
		t.Fatal(err)
	}
	if want := (Images{Kind: "offline", RabbitMQ: "r:1", Nginx: "n:1", WireMock: "w:1", Toxiproxy: "t:1"}); im != want {
		t.Errorf("ImagesFromEnv = %+v, want %+v", im, want)
	}
}

func TestReadImagesEnv(t *testing.T) {
	path := filepath.Join(t.TempDir(), "images.env")
	content := "# written by ensure-images.sh\nLAB_IMAGES_KIND=offline\nexport LAB_IMAGE_RABBITMQ=\"r:file\"\nLAB_IMAGE_NGINX=n:file\nLAB_IMAGE_WIREMOCK='w:file'\nLAB_IMAGE_TOXIPROXY=t:file\nLAB_IMAGE_WORKER=\n"
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	setImageEnv(t, map[string]string{EnvImageNginx: "n:env"})
	im, err := ReadImagesEnv(path)
	if err != nil {
		t.Fatal(err)
	}
	want := Images{Kind: "offline", RabbitMQ: "r:file", Nginx: "n:env", WireMock: "w:file", Toxiproxy: "t:file"}
	if im != want {
		t.Errorf("ReadImagesEnv = %+v, want %+v (environment wins)", im, want)
	}
	_, err = ReadImagesEnv(filepath.Join(t.TempDir(), "none.env"))
	if !errors.Is(err, ErrImagesMissing) {
		t.Errorf("missing file: err %v, want ErrImagesMissing", err)
	}
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: err %v, want it to wrap the open error (fs.ErrNotExist)", err)
	}
}
