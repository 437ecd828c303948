// Empty: this package only pins nvml-wrapper (see Cargo.toml).
