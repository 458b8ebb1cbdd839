package vendormock

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Environment variables naming the contract worker images (written to
// .lab/images.env by vendormock/images/workers.sh).
const (
	EnvImageWorkerNode   = "LAB_IMAGE_WORKER_NODE"
	EnvImageWorkerJava   = "LAB_IMAGE_WORKER_JAVA"
	EnvImageWorkerPython = "LAB_IMAGE_WORKER_PYTHON"
)

// WorkerGo is the default worker under test: the Go worker
// (LAB_IMAGE_WORKER), configured by flags. WorkerImagePrefix starts a
// WORKER value naming any image that follows the worker contract.
const (
	WorkerGo          = "go"
	WorkerImagePrefix = "image:"
)

// ErrUnknownWorker is wrapped by WorkerImage for a name it does not know;
// the message lists the known names.
var ErrUnknownWorker = errors.New("unknown worker")

// referenceWorkers maps each WORKER name of a contract worker this project
// builds (workers/) to its image variable and CLIENT_MODE
// (docs/worker-contract.md#implementations): the reference workers with
// the languages' own clients, the third-party client workers, and their
// fixed variants (FixedSuffix: the documented one-line fix applied, with
// an idle timeout of FixedIdleTimeout).
var referenceWorkers = map[string]struct{ imageEnv, mode string }{
	"python-session-fixed":   {EnvImageWorkerPython, "session-fixed"},
	"python-httpx-fixed":     {EnvImageWorkerPython, "httpx-fixed"},
	"java-okhttp-fixed":      {EnvImageWorkerJava, "okhttp-fixed"},
	"java-apache-fixed":      {EnvImageWorkerJava, "apache-fixed"},
	"node-axios-fixed":       {EnvImageWorkerNode, "axios-fixed"},
	"node-got-fixed":         {EnvImageWorkerNode, "got-fixed"},
	"node-fetch":             {EnvImageWorkerNode, "fetch"},
	"node-agent-nokeepalive": {EnvImageWorkerNode, "agent-nokeepalive"},
	"node-agent-keepalive":   {EnvImageWorkerNode, "agent-keepalive"},
	"java-shared":            {EnvImageWorkerJava, "shared"},
	"java-per-send":          {EnvImageWorkerJava, "per-send"},
	"java-okhttp":            {EnvImageWorkerJava, "okhttp"},
	"java-apache":            {EnvImageWorkerJava, "apache"},
	"node-axios":             {EnvImageWorkerNode, "axios"},
	"node-got":               {EnvImageWorkerNode, "got"},
	"python-requests":        {EnvImageWorkerPython, "requests"},
	"python-session":         {EnvImageWorkerPython, "session"},
	"python-httpx":           {EnvImageWorkerPython, "httpx"},
}

// WorkerNames returns the known WORKER values, WorkerGo first, then the
// reference workers sorted, then "image:NAME".
func WorkerNames() []string {
	names := slices.Sorted(maps.Keys(referenceWorkers))
	return append(append([]string{WorkerGo}, names...), WorkerImagePrefix+"NAME")
}

// WorkerSelection is the worker under test a WORKER value names.
type WorkerSelection struct {
	// Name is the WORKER value, e.g. "node-fetch" or "image:acme/worker:1".
	Name string
	// Image is the container image; "" for WorkerGo (the stack's worker
	// image, LAB_IMAGE_WORKER).
	Image string
	// Contract is true for every worker but Go's: it is configured only
	// by the contract's environment (ContractEnv) and gets no flags.
	Contract bool
	// Env is the worker's own knobs (CLIENT_MODE of a reference worker);
	// add it to the contract environment.
	Env map[string]string
	// IdleFromKeepalive is true for a fixed variant (FixedSuffix): the lab
	// adds EnvClientIdleTimeout from the vendor's keep-alive
	// (SetIdleTimeout), which the worker requires.
	IdleFromKeepalive bool
}

// WorkerImage resolves a WORKER value (WorkerNames) to its image and
// environment; getenv reads the image variables (Images.Var of the
// images the command read at its edge; nil reads nothing). ""
// means WorkerGo. Errors: ErrUnknownWorker listing the known names; a
// reference worker whose image variable is empty (wraps ErrImagesMissing
// and says how to build it); "image:" without a name.
func WorkerImage(name string, getenv func(string) string) (WorkerSelection, error) {
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	if name == "" || name == WorkerGo {
		return WorkerSelection{Name: WorkerGo}, nil
	}
	if img, ok := strings.CutPrefix(name, WorkerImagePrefix); ok {
		if strings.TrimSpace(img) == "" {
			return WorkerSelection{}, fmt.Errorf("%w %q: want image:NAME with an image name, e.g. image:acme/worker:1.2", ErrUnknownWorker, name)
		}
		return WorkerSelection{Name: name, Image: img, Contract: true, Env: map[string]string{}}, nil
	}
	ref, ok := referenceWorkers[name]
	if !ok {
		return WorkerSelection{}, fmt.Errorf("%w %q; known: %s", ErrUnknownWorker, name, strings.Join(WorkerNames(), ", "))
	}
	img := getenv(ref.imageEnv)
	if img == "" {
		return WorkerSelection{}, fmt.Errorf("%w: worker %s needs %s: run vendormock/images/ensure-images.sh (it builds the reference workers from the Debian base) and load %s",
			ErrImagesMissing, name, ref.imageEnv, DefaultImagesEnvFile)
	}
	return WorkerSelection{Name: name, Image: img, Contract: true, Env: map[string]string{"CLIENT_MODE": ref.mode},
		IdleFromKeepalive: strings.HasSuffix(name, FixedSuffix)}, nil
}

// FixedSuffix ends the WORKER name of a third-party client's fixed
// variant: "java-okhttp-fixed" is "java-okhttp" with the fix its README
// documents (docs/auditing.md#fixed-variants).
const FixedSuffix = "-fixed"

// EnvClientIdleTimeout is the variable carrying a fixed variant's idle
// timeout in ms (docs/worker-contract.md#what-the-lab-gives-the-worker).
const EnvClientIdleTimeout = "CLIENT_IDLE_TIMEOUT_MS"

// FixedIdleMargin is how far below the vendor's keep-alive a fixed
// variant's idle timeout sits: one second, above every RTT the lab adds
// (the audit's 3 and 10 ms, the idle races' at most 300 ms), so that the
// client drops a connection before the server's close can cross a request
// (docs/worker-contract.md#the-audit, rule "idles out below the vendor's
// keep-alive minus one RTT").
const FixedIdleMargin = time.Second

// FixedIdleTimeout returns the idle timeout the lab gives a fixed variant
// for a vendor keep-alive: keepalive - FixedIdleMargin, at least 1 ms.
func FixedIdleTimeout(keepalive time.Duration) time.Duration {
	return max(keepalive-FixedIdleMargin, time.Millisecond)
}

// SetIdleTimeout sets EnvClientIdleTimeout in env to
// FixedIdleTimeout(keepalive) when sel is a fixed variant, and returns the
// value set (0 = sel is not one, env unchanged).
func (sel WorkerSelection) SetIdleTimeout(env map[string]string, keepalive time.Duration) time.Duration {
	if !sel.IdleFromKeepalive {
		return 0
	}
	d := FixedIdleTimeout(keepalive)
	env[EnvClientIdleTimeout] = strconv.FormatInt(d.Milliseconds(), 10)
	return d
}

// ContractOptions are the run's values of the worker contract that do not
// come from the stack (docs/worker-contract.md#what-the-lab-gives-the-worker).
// Zero values mean the contract's defaults.
type ContractOptions struct {
	Queue                string        // main queue; "" = "notifications"
	QueueType            string        // QueueClassic ("" = it) or QueueQuorum
	SingleActiveConsumer bool          // the main queue's x-single-active-consumer
	RetryDelay           time.Duration // 0 = 5 s
	RetryMaxDelay        time.Duration // 0 = 5 min
	MaxAttempts          int           // 0 = 5
	// RecordsPath and LedgerPath are paths inside the container, normally
	// under WorkerOutDir; "" leaves RECORDS or LEDGER unset (StartReplicas
	// sets both itself).
	RecordsPath, LedgerPath string
	WorkerID                string    // "" = not set (the worker uses its host name; StartReplicas sets it)
	MaxMessages             int       // 0 = run until SIGTERM
	ClockStart              time.Time // zero = the host clock
}

// ContractEnv returns the environment of docs/worker-contract.md for a
// worker on st's network: broker, queues, vendor URL and API paths from the
// stack's profile, the CA at WorkerCAPath, credentials, status table,
// records and ledger paths. Add WorkerSelection.Env for the worker's own
// knobs. It holds the client secret: never log it.
func ContractEnv(st *Stack, o ContractOptions) map[string]string {
	ms := func(d, def time.Duration) string {
		if d <= 0 {
			d = def
		}
		return strconv.FormatInt(d.Milliseconds(), 10)
	}
	or := func(s, def string) string {
		if s == "" {
			return def
		}
		return s
	}
	env := map[string]string{
		"AMQP_URL":               st.AMQPURLNetwork,
		"QUEUE":                  or(o.Queue, "notifications"),
		"QUEUE_TYPE":             or(o.QueueType, QueueClassic),
		"SINGLE_ACTIVE_CONSUMER": strconv.FormatBool(o.SingleActiveConsumer),
		"RETRY_DELAY_MS":         ms(o.RetryDelay, 5*time.Second),
		"RETRY_MAX_DELAY_MS":     ms(o.RetryMaxDelay, 5*time.Minute),
		"MAX_ATTEMPTS":           strconv.Itoa(max(o.MaxAttempts, 0)),
		"VENDOR_URL":             st.VendorURL,
		"VENDOR_CA_FILE":         WorkerCAPath,
		"VENDOR_CLIENT_ID":       st.ClientID,
		"VENDOR_CLIENT_SECRET":   st.ClientSecret,
		"MAX_MESSAGES":           strconv.Itoa(max(o.MaxMessages, 0)),
	}
	if o.MaxAttempts <= 0 {
		env["MAX_ATTEMPTS"] = "5"
	}
	if p := st.Profile; p != nil {
		maps.Copy(env, p.VendorAPIEnv())
		env["VENDOR_CORRELATION_HEADER"] = p.Client.CorrelationHeader
		env["VENDOR_RESPONSE_TIMEOUT_MS"] = ms(p.Client.ResponseTimeout, 10*time.Second)
		if p.StatusTableJSON != "" {
			env[EnvStatusTable] = p.StatusTableJSON
		}
	}
	if o.RecordsPath != "" {
		env["RECORDS"] = o.RecordsPath
	}
	if o.LedgerPath != "" {
		env[EnvLedger] = o.LedgerPath
	}
	if o.WorkerID != "" {
		env[EnvWorkerID] = o.WorkerID
	}
	if !o.ClockStart.IsZero() {
		env["CLOCK_START"] = o.ClockStart.Format(time.RFC3339Nano)
	}
	return env
}

// ReplicaContractEnv is ContractEnv for ReplicaOptions.Env: without the
// variables StartReplicas sets itself (WORKER_ID, LEDGER, RECORDS,
// QUEUE_TYPE, SINGLE_ACTIVE_CONSUMER, OPS_ADDR; set ReplicaOptions
// QueueType and NoSingleActiveConsumer instead).
func ReplicaContractEnv(st *Stack, o ContractOptions) map[string]string {
	env := ContractEnv(st, o)
	for _, k := range labEnv {
		delete(env, k)
	}
	return env
}

// VendorAPIEnv returns the profile's vendor API as the contract's variables
// (docs/worker-contract.md#what-the-lab-gives-the-worker): VENDOR_TOKEN_PATH,
// VENDOR_TOKEN_AUTH ("basic" when the profile says nothing),
// VENDOR_SEND_PATH, VENDOR_REFKEY_FIELD, VENDOR_CODE_FIELD ("code" when
// unset) and VENDOR_CORRELATION_HEADER when the profile names one. The Go
// worker reads them as its flags' fallbacks. A nil p gives an empty map.
func (p *Profile) VendorAPIEnv() map[string]string {
	env := map[string]string{}
	if p == nil {
		return env
	}
	env["VENDOR_TOKEN_PATH"] = p.API.TokenPath
	env["VENDOR_TOKEN_AUTH"] = p.API.tokenAuth()
	env["VENDOR_SEND_PATH"] = p.API.SendPath
	env["VENDOR_REFKEY_FIELD"] = p.API.RefKeyField
	env["VENDOR_CODE_FIELD"] = p.API.codeField()
	if p.Client.CorrelationHeader != "" {
		env["VENDOR_CORRELATION_HEADER"] = p.Client.CorrelationHeader
	}
	return env
}
