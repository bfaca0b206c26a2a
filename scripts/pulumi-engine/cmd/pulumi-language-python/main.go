// Command pulumi-language-python is railyard's minimal Python language host for the Pulumi engine.
//
// Why it exists: upstream's host lives in its own Go module
// (github.com/pulumi/pulumi/sdk/python/cmd/pulumi-language-python/v3) that has no version tags,
// and the Go module proxy reachable from railyard's offline machines refuses every query for it
// (list, latest, commit hashes). The engine itself (pkg/v3) and the SDK (sdk/v3) are served, so
// this host is built from sdk/v3's gRPC definitions instead.
//
// It implements the part of the LanguageRuntime contract that `pulumi up/preview/destroy/refresh`
// need for a Python program: it runs the SDK's own `pulumi-language-python-exec` script (shipped
// in the sdk/v3 module and installed beside this binary) with the interpreter the project asks
// for. It does not discover provider plugins from installed pip packages (GetRequiredPackages
// returns none; the engine then loads plugins when resources ask for them), does not install
// dependencies (`pulumi install` is a no-op) and does not run Python plugins or code generation.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/types/known/emptypb"

	"github.com/pulumi/pulumi/sdk/v3/go/common/util/rpcutil"
	pulumirpc "github.com/pulumi/pulumi/sdk/v3/proto/go"
)

// version is set at build time (-ldflags "-X main.version=v3.X") to the engine version it was built with.
var version = "v3.0.0-dev"

// execScriptName is the SDK's program runner, expected next to this executable.
const execScriptName = "pulumi-language-python-exec"

// bailExitCode is what pulumi-language-python-exec exits with after it has already reported the error.
const bailExitCode = 32

type languageHost struct {
	pulumirpc.UnimplementedLanguageRuntimeServer

	mu            sync.Mutex
	engineAddress string
	tracing       string
	execScript    string
}

func (h *languageHost) engine() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.engineAddress
}

func (h *languageHost) Handshake(
	_ context.Context, req *pulumirpc.LanguageHandshakeRequest,
) (*pulumirpc.LanguageHandshakeResponse, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if req.GetEngineAddress() != "" {
		h.engineAddress = req.GetEngineAddress()
	}
	return &pulumirpc.LanguageHandshakeResponse{}, nil
}

func (h *languageHost) GetPluginInfo(context.Context, *emptypb.Empty) (*pulumirpc.PluginInfo, error) {
	return &pulumirpc.PluginInfo{Version: strings.TrimPrefix(version, "v")}, nil
}

// GetRequiredPlugins reports no plugins: nothing is downloaded ahead of the run.
func (h *languageHost) GetRequiredPlugins(
	context.Context, *pulumirpc.GetRequiredPluginsRequest,
) (*pulumirpc.GetRequiredPluginsResponse, error) {
	return &pulumirpc.GetRequiredPluginsResponse{}, nil
}

// GetRequiredPackages reports no packages, for the same reason as GetRequiredPlugins.
func (h *languageHost) GetRequiredPackages(
	context.Context, *pulumirpc.GetRequiredPackagesRequest,
) (*pulumirpc.GetRequiredPackagesResponse, error) {
	return &pulumirpc.GetRequiredPackagesResponse{}, nil
}

func (h *languageHost) Cancel(context.Context, *emptypb.Empty) (*emptypb.Empty, error) {
	return &emptypb.Empty{}, nil
}

func (h *languageHost) About(_ context.Context, req *pulumirpc.AboutRequest) (*pulumirpc.AboutResponse, error) {
	py, err := resolvePython(req.GetInfo())
	if err != nil {
		return nil, err
	}
	out, err := exec.Command(py.cmd, "--version").CombinedOutput() //nolint:gosec // interpreter chosen by the project
	if err != nil {
		return nil, fmt.Errorf("running %s --version: %w", py.cmd, err)
	}
	ver := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(string(out)), "Python "))
	return &pulumirpc.AboutResponse{
		Executable: py.cmd,
		Version:    ver,
		Metadata:   map[string]string{"languageHost": "railyard pulumi-language-python " + version},
	}, nil
}

// python is the interpreter a program runs with, plus the environment changes it needs.
type python struct {
	cmd string
	env []string
}

// runtimeOptions returns the `runtime.options` map of Pulumi.yaml (empty when absent).
func runtimeOptions(info *pulumirpc.ProgramInfo) map[string]any {
	if info == nil || info.GetOptions() == nil {
		return map[string]any{}
	}
	return info.GetOptions().AsMap()
}

// resolvePython picks the interpreter the same way the SDK's dynamic-provider script does:
// the project's virtualenv first, then $PULUMI_PYTHON_CMD, then python3 / python on PATH.
func resolvePython(info *pulumirpc.ProgramInfo) (python, error) {
	opts := runtimeOptions(info)
	toolchain, _ := opts["toolchain"].(string)
	venv, _ := opts["virtualenv"].(string)
	switch toolchain {
	case "", "pip":
	case "uv":
		if venv == "" {
			venv = ".venv"
		}
	default:
		if venv == "" {
			return python{}, fmt.Errorf(
				"runtime option toolchain=%q is not supported by railyard's language host; "+
					"set runtime.options.virtualenv to an existing virtualenv instead", toolchain)
		}
	}

	if venv != "" {
		if !filepath.IsAbs(venv) {
			root := info.GetRootDirectory()
			if root == "" {
				root = info.GetProgramDirectory()
			}
			venv = filepath.Join(root, venv)
		}
		bin := filepath.Join(venv, "bin")
		cmd := filepath.Join(bin, "python")
		if _, err := os.Stat(cmd); err != nil {
			return python{}, fmt.Errorf(
				"the virtualenv option in Pulumi.yaml names %s, but %s does not exist: "+
					"create it with `python3 -m venv %s` and install the pulumi SDK into it", venv, cmd, venv)
		}
		return python{cmd: cmd, env: []string{
			"VIRTUAL_ENV=" + venv,
			"PATH=" + bin + string(os.PathListSeparator) + os.Getenv("PATH"),
			"PYTHONHOME=",
		}}, nil
	}

	if cmd := os.Getenv("PULUMI_PYTHON_CMD"); cmd != "" {
		return python{cmd: cmd}, nil
	}
	for _, name := range []string{"python3", "python"} {
		if path, err := exec.LookPath(name); err == nil {
			return python{cmd: path}, nil
		}
	}
	return python{}, errors.New("no python3 or python found on PATH (or set PULUMI_PYTHON_CMD)")
}

func (h *languageHost) Run(ctx context.Context, req *pulumirpc.RunRequest) (*pulumirpc.RunResponse, error) {
	info := req.GetInfo()
	py, err := resolvePython(info)
	if err != nil {
		return &pulumirpc.RunResponse{Error: err.Error()}, nil
	}

	program := req.GetProgram() //nolint:staticcheck // still filled by the engine; Info is preferred
	if info.GetProgramDirectory() != "" {
		program = filepath.Join(info.GetProgramDirectory(), info.GetEntryPoint())
	}

	args := []string{
		"-u", h.execScript,
		"--monitor", req.GetMonitorAddress(),
		"--engine", h.engine(),
		"--project", req.GetProject(),
		"--stack", req.GetStack(),
		"--pwd", req.GetPwd(),
		"--dry_run", strconv.FormatBool(req.GetDryRun()),
		"--parallel", strconv.Itoa(int(req.GetParallel())),
	}
	if org := req.GetOrganization(); org != "" {
		args = append(args, "--organization", org)
	}
	if root := info.GetRootDirectory(); root != "" {
		args = append(args, "--root_directory", root)
	}
	if h.tracing != "" {
		args = append(args, "--tracing", h.tracing)
	}
	args = append(args, "--", program)
	args = append(args, req.GetArgs()...)

	config, err := json.Marshal(req.GetConfig())
	if err != nil {
		return nil, err
	}
	secretKeys := req.GetConfigSecretKeys()
	if secretKeys == nil {
		secretKeys = []string{}
	}
	secrets, err := json.Marshal(secretKeys)
	if err != nil {
		return nil, err
	}

	cmd := exec.CommandContext(ctx, py.cmd, args...) //nolint:gosec // interpreter chosen by the project
	cmd.Dir = req.GetPwd()
	cmd.Env = append(os.Environ(), py.env...)
	cmd.Env = append(cmd.Env,
		"PULUMI_CONFIG="+string(config),
		"PULUMI_CONFIG_SECRET_KEYS="+string(secrets),
		"PYTHONUNBUFFERED=1",
	)
	// The engine forwards this process's stdout and stderr to the user.
	cmd.Stdout = os.Stdout
	cmd.Stderr = os.Stderr

	if err := cmd.Run(); err != nil {
		var exitErr *exec.ExitError
		if errors.As(err, &exitErr) {
			if exitErr.ExitCode() == bailExitCode {
				return &pulumirpc.RunResponse{Bail: true}, nil
			}
			return &pulumirpc.RunResponse{
				Error: fmt.Sprintf("Program exited with non-zero exit code: %d", exitErr.ExitCode()),
			}, nil
		}
		return &pulumirpc.RunResponse{Error: fmt.Sprintf("running %s: %v", py.cmd, err)}, nil
	}
	return &pulumirpc.RunResponse{}, nil
}

func main() {
	flags := flag.NewFlagSet("pulumi-language-python", flag.ContinueOnError)
	// Flags the engine may pass to every plugin; logging ones are accepted and ignored.
	tracing := flags.String("tracing", "", "emit tracing to a Zipkin-compatible endpoint")
	_ = flags.Bool("logtostderr", false, "log to stderr (ignored)")
	_ = flags.Int("v", 0, "log verbosity (ignored)")
	_ = flags.Bool("logflow", false, "flow logging settings to child processes (ignored)")
	_ = flags.String("root", "", "project root directory (ignored; the engine sends it with each call)")
	if len(os.Args) == 2 && os.Args[1] == "--version" {
		fmt.Println(version)
		return
	}
	if err := flags.Parse(os.Args[1:]); err != nil {
		os.Exit(2)
	}

	self, err := os.Executable()
	if err != nil {
		fmt.Fprintf(os.Stderr, "fatal: locating own executable: %v\n", err)
		os.Exit(1)
	}
	if resolved, err := filepath.EvalSymlinks(self); err == nil {
		self = resolved
	}
	execScript := filepath.Join(filepath.Dir(self), execScriptName)
	if _, err := os.Stat(execScript); err != nil {
		fmt.Fprintf(os.Stderr, "fatal: %s must be installed next to %s: %v\n", execScriptName, self, err)
		os.Exit(1)
	}

	host := &languageHost{tracing: *tracing, execScript: execScript}
	if flags.NArg() > 0 {
		host.engineAddress = flags.Arg(0)
	}

	handle, err := rpcutil.ServeWithOptions(rpcutil.ServeOptions{
		Init: func(srv *grpc.Server) error {
			pulumirpc.RegisterLanguageRuntimeServer(srv, host)
			return nil
		},
		Options: rpcutil.OpenTracingServerInterceptorOptions(nil),
	})
	if err != nil {
		fmt.Fprintf(os.Stderr, "fatal: %v\n", err)
		os.Exit(1)
	}
	// The engine reads the port from the first line of stdout.
	fmt.Printf("%d\n", handle.Port)
	if err := <-handle.Done; err != nil {
		fmt.Fprintf(os.Stderr, "fatal: %v\n", err)
		os.Exit(1)
	}
}
