// abi_sync.rs — keeps the hand-written declarations of `catalyst::sys` in step with
// abi/catalyst.h. It writes a C++ program that includes catalyst.h and checks, with the C++
// compiler, every field type, every function signature and every type alias that `sys`
// declares (static_assert on the types translated from Rust), and prints every struct's
// size, alignment, field offsets and *_STRUCT_SIZE, and every constant's value, which the
// test compares with what this Rust compiler computed. It also reads catalyst.h itself and
// fails for any function, struct, typedef or constant there that `sys` does not declare.
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use catalyst::sys;

fn repository() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn abi_dir() -> PathBuf {
    match std::env::var("CATALYST_INCLUDE_DIR") {
        Ok(dir) if !dir.is_empty() => PathBuf::from(dir),
        _ => repository().join("abi"),
    }
}

// ---- Rust types as text → C++ types --------------------------------------------------------

#[derive(Debug)]
enum RustType {
    Named(String),
    Pointer { constant: bool, to: Box<RustType> },
    Array(Box<RustType>, String),
    Function { args: Vec<RustType>, ret: Box<RustType> },
    Unit,
}

fn tokens(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let chars: Vec<char> = text.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c.is_whitespace() {
            i += 1;
        } else if c.is_alphanumeric() || c == '_' {
            let start = i;
            while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            out.push(chars[start..i].iter().collect());
        } else if c == '"' {
            let start = i;
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                i += 1;
            }
            i += 1;
            out.push(chars[start..i].iter().collect());
        } else if c == '-' && chars.get(i + 1) == Some(&'>') {
            out.push("->".to_string());
            i += 2;
        } else if c == ':' && chars.get(i + 1) == Some(&':') {
            out.push("::".to_string());
            i += 2;
        } else {
            out.push(c.to_string());
            i += 1;
        }
    }
    out
}

struct Parser {
    tokens: Vec<String>,
    at: usize,
}

impl Parser {
    fn peek(&self) -> &str {
        self.tokens.get(self.at).map(|s| s.as_str()).unwrap_or("")
    }
    fn next(&mut self) -> String {
        let t = self.peek().to_string();
        self.at += 1;
        t
    }
    fn expect(&mut self, token: &str) {
        let t = self.next();
        assert_eq!(t, token, "parsing {:?}", self.tokens);
    }
    fn parse(&mut self) -> RustType {
        match self.peek() {
            "*" => {
                self.next();
                let constant = match self.next().as_str() {
                    "const" => true,
                    "mut" => false,
                    other => panic!("pointer qualifier {:?} in {:?}", other, self.tokens),
                };
                RustType::Pointer { constant, to: Box::new(self.parse()) }
            }
            "[" => {
                self.next();
                let element = self.parse();
                self.expect(";");
                let count = self.next();
                self.expect("]");
                RustType::Array(Box::new(element), count)
            }
            "(" => {
                self.next();
                self.expect(")");
                RustType::Unit
            }
            "Option" => {
                self.next();
                self.expect("<");
                let inner = self.parse();
                self.expect(">");
                inner
            }
            "unsafe" | "extern" | "fn" => {
                if self.peek() == "unsafe" {
                    self.next();
                }
                if self.peek() == "extern" {
                    self.next();
                    assert_eq!(self.next(), "\"C\"", "only extern \"C\" functions cross the ABI");
                }
                self.expect("fn");
                self.expect("(");
                let mut args = Vec::new();
                while self.peek() != ")" {
                    args.push(self.parse());
                    if self.peek() == "," {
                        self.next();
                    }
                }
                self.expect(")");
                let ret = if self.peek() == "->" {
                    self.next();
                    self.parse()
                } else {
                    RustType::Unit
                };
                RustType::Function { args, ret: Box::new(ret) }
            }
            _ => {
                let mut name = self.next();
                while self.peek() == "::" {
                    self.next();
                    name = self.next();
                }
                RustType::Named(name)
            }
        }
    }
}

fn parse_type(text: &str) -> RustType {
    let mut parser = Parser { tokens: tokens(text), at: 0 };
    let parsed = parser.parse();
    assert_eq!(parser.at, parser.tokens.len(), "trailing tokens in {:?}", text);
    parsed
}

fn c_name(name: &str) -> String {
    match name {
        "i8" => "int8_t",
        "u8" => "uint8_t",
        "i16" => "int16_t",
        "u16" => "uint16_t",
        "i32" => "int32_t",
        "u32" => "uint32_t",
        "i64" => "int64_t",
        "u64" => "uint64_t",
        "usize" => "size_t",
        "isize" => "ptrdiff_t",
        "f32" => "float",
        "f64" => "double",
        "bool" => "bool",
        "c_char" => "char",
        "c_int" => "int",
        "c_uint" => "unsigned int",
        "c_void" => "void",
        other => other,
    }
    .to_string()
}

/// The C++ type-id of a Rust type (const written after what it qualifies).
fn cpp(t: &RustType) -> String {
    match t {
        RustType::Named(name) => c_name(name),
        RustType::Unit => "void".to_string(),
        RustType::Pointer { constant, to } => format!("{}{}*", cpp(to), if *constant { " const" } else { "" }),
        RustType::Array(element, count) => format!("{}[{}]", cpp(element), count),
        RustType::Function { args, ret } => {
            let args: Vec<String> = args.iter().map(cpp).collect();
            format!("{}(*)({})", cpp(ret), args.join(", "))
        }
    }
}

/// (size, signed) of a Rust integer alias used for a C enum.
fn enum_alias(rust: &str) -> Option<(usize, bool)> {
    match rust.trim() {
        "c_uint" => Some((std::mem::size_of::<std::os::raw::c_uint>(), false)),
        "c_int" => Some((std::mem::size_of::<std::os::raw::c_int>(), true)),
        _ => None,
    }
}

/// Whether catalyst.h defines a `*_STRUCT_SIZE` constant for the struct: every ctl_ struct
/// that starts with `struct_size` does. DLPack's structs, and ctl_fused_instruction (an
/// element of a fixed array, sized by the struct that holds the array), have none.
fn has_size_constant(layout: &sys::StructLayout) -> bool {
    layout.name.starts_with("ctl_") && layout.fields.first().map_or(false, |f| f.name == "struct_size")
}

// ---- the probe ---------------------------------------------------------------------------

fn probe_source() -> String {
    let mut s = String::new();
    // DLManagedTensorVersioned: the public header where the ABI has it (since 1.4), else the
    // core's own declaration (Debian 12's dlpack.h predates DLPack 1.0).
    let dlpack = if abi_dir().join("catalyst_dlpack.h").exists() { "catalyst_dlpack.h" } else { "dlpack_versioned.h" };
    s.push_str(&format!("#include <dlpack/dlpack.h>\n#include \"{}\"\n#include <catalyst.h>\n", dlpack));
    s.push_str("#include <cstddef>\n#include <cstdio>\n#include <type_traits>\n\n");
    s.push_str("template <typename A, typename B> constexpr bool same = std::is_same<A, B>::value;\n\n");
    s.push_str("int main() {\n");
    for (name, _) in sys::CONSTANTS {
        s.push_str(&format!("  std::printf(\"const {0} %lld\\n\", static_cast<long long>({0}));\n", name));
    }
    for layout in sys::struct_layouts() {
        let n = layout.name;
        s.push_str(&format!("  std::printf(\"size {0} %zu\\n\", sizeof({0}));\n", n));
        s.push_str(&format!("  std::printf(\"align {0} %zu\\n\", alignof({0}));\n", n));
        if has_size_constant(&layout) {
            // Rust has no const offsetof in 1.63, so each *_STRUCT_SIZE is the struct's abi_size().
            s.push_str(&format!("  std::printf(\"struct_size {0} %zu\\n\", {1}_STRUCT_SIZE);\n", n, n.to_uppercase()));
        }
        for field in &layout.fields {
            s.push_str(&format!("  std::printf(\"offset {0}.{1} %zu\\n\", offsetof({0}, {1}));\n", n, field.name));
            s.push_str(&format!(
                "  static_assert(same<decltype({0}::{1}), {2}>, \"{0}.{1}: the Rust type {3} is not the C type\");\n",
                n,
                field.name,
                cpp(&parse_type(field.rust_type)),
                field.rust_type.replace('"', "\\\"")
            ));
        }
    }
    for (name, rust) in sys::TYPE_ALIASES {
        if enum_alias(rust).is_some() {
            s.push_str(&format!("  static_assert(std::is_enum<{0}>::value, \"{0} is not an enum in C\");\n", name));
            s.push_str(&format!("  std::printf(\"size {0} %zu\\n\", sizeof({0}));\n", name));
            s.push_str(&format!(
                "  std::printf(\"signed {0} %d\\n\", static_cast<int>(std::is_signed<std::underlying_type<{0}>::type>::value));\n",
                name
            ));
        } else {
            s.push_str(&format!(
                "  static_assert(same<{0}, {1}>, \"{0}: the Rust type {2} is not the C type\");\n",
                name,
                cpp(&parse_type(rust)),
                rust.replace('"', "\\\"")
            ));
        }
    }
    for name in sys::OPAQUE_TYPES {
        // An incomplete struct type of that name must exist.
        s.push_str(&format!("  static_assert(std::is_class<{0}>::value, \"{0}\");\n", name));
    }
    for f in sys::FUNCTIONS {
        let args: Vec<String> = f.args.iter().map(|a| cpp(&parse_type(a))).collect();
        let ret = cpp(&parse_type(f.ret));
        s.push_str(&format!(
            "  static_assert(same<decltype(&{0}), {1}(*)({2})>, \"{0}: the Rust signature ({3}) -> {4} is not C's\");\n",
            f.name,
            ret,
            args.join(", "),
            f.args.join(", ").replace('"', "\\\""),
            f.ret
        ));
    }
    s.push_str("  return 0;\n}\n");
    s
}

/// The probe's output, made once: the tests run on several threads and share its files.
fn run_probe() -> BTreeMap<String, i128> {
    static PROBE: std::sync::Mutex<Option<BTreeMap<String, i128>>> = std::sync::Mutex::new(None);
    let mut probe = PROBE.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    if probe.is_none() {
        *probe = Some(compile_and_run_probe());
    }
    probe.clone().unwrap()
}

fn compile_and_run_probe() -> BTreeMap<String, i128> {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("abi_sync");
    std::fs::create_dir_all(&dir).unwrap();
    let source = dir.join("probe.cpp");
    let binary = dir.join("probe");
    std::fs::write(&source, probe_source()).unwrap();
    let compiler = std::env::var("CXX").unwrap_or_else(|_| "c++".to_string());
    let compiled = Command::new(&compiler)
        .arg("-std=c++17")
        .arg("-Wall")
        .arg("-Werror")
        .arg(format!("-I{}", abi_dir().display()))
        .arg(format!("-I{}", repository().join("core").display()))
        .arg(&source)
        .arg("-o")
        .arg(&binary)
        .output()
        .unwrap_or_else(|e| panic!("could not run the C++ compiler {:?}: {}", compiler, e));
    assert!(
        compiled.status.success(),
        "the declarations in catalyst::sys do not match catalyst.h ({}):\n{}",
        source.display(),
        String::from_utf8_lossy(&compiled.stderr)
    );
    let ran = Command::new(&binary).output().unwrap();
    assert!(ran.status.success());
    String::from_utf8(ran.stdout)
        .unwrap()
        .lines()
        .map(|line| {
            let mut parts = line.split(' ');
            let kind = parts.next().unwrap();
            let name = parts.next().unwrap();
            let value: i128 = parts.next().unwrap().parse().unwrap();
            (format!("{} {}", kind, name), value)
        })
        .collect()
}

#[test]
fn declarations_match_the_header() {
    let c = run_probe();
    let mut rust: BTreeMap<String, i128> = BTreeMap::new();
    for (name, value) in sys::CONSTANTS {
        rust.insert(format!("const {}", name), *value);
    }
    for layout in sys::struct_layouts() {
        rust.insert(format!("size {}", layout.name), layout.size as i128);
        rust.insert(format!("align {}", layout.name), layout.align as i128);
        for field in &layout.fields {
            rust.insert(format!("offset {}.{}", layout.name, field.name), field.offset as i128);
        }
    }
    for (name, alias) in sys::TYPE_ALIASES {
        if let Some((size, signed)) = enum_alias(alias) {
            rust.insert(format!("size {}", name), size as i128);
            rust.insert(format!("signed {}", name), signed as i128);
        }
    }
    let mut mismatches = Vec::new();
    for (key, value) in &rust {
        match c.get(key) {
            Some(c_value) if c_value == value => {}
            Some(c_value) => mismatches.push(format!("{}: Rust {}, C {}", key, value, c_value)),
            None => mismatches.push(format!("{}: not printed by the probe", key)),
        }
    }
    assert!(mismatches.is_empty(), "catalyst::sys differs from catalyst.h:\n{}", mismatches.join("\n"));
    assert!(rust.len() > 300, "the probe checked only {} values", rust.len());
}

#[test]
fn struct_size_constants_match() {
    let c = run_probe();
    for layout in sys::struct_layouts() {
        if !has_size_constant(&layout) {
            continue;
        }
        let key = format!("struct_size {}", layout.name);
        let c_value = c.get(&key).unwrap_or_else(|| panic!("the probe did not print {}", key));
        assert_eq!(*c_value, layout.abi_size as i128, "{}_STRUCT_SIZE", layout.name.to_uppercase());
    }
}

// ---- what catalyst.h declares ----------------------------------------------------------------

/// Names the header declares, by kind: functions, structs, opaque types, typedefs, constants.
fn header_names() -> BTreeMap<&'static str, Vec<String>> {
    let header = std::fs::read_to_string(abi_dir().join("catalyst.h")).expect("catalyst.h");
    let identifier = |text: &str| -> String { text.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect() };
    let mut names: BTreeMap<&'static str, Vec<String>> = BTreeMap::new();
    for (index, _) in header.match_indices("CTL_EXPORT") {
        let line_start = header[..index].rfind('\n').map_or(0, |i| i + 1);
        if header[line_start..index].contains("#define") || header[line_start..index].contains("#") {
            continue;
        }
        let declaration = &header[index..];
        let open = declaration.find('(').unwrap();
        let before = declaration[..open].trim_end();
        let name_start = before.rfind(|c: char| !(c.is_alphanumeric() || c == '_')).unwrap() + 1;
        names.entry("function").or_default().push(before[name_start..].to_string());
    }
    for line in header.lines() {
        let line = line.trim();
        if let Some(rest) = line.strip_prefix("typedef struct ") {
            let name = identifier(rest);
            let after = rest[name.len()..].trim();
            if after.starts_with('{') {
                names.entry("struct").or_default().push(name);
            } else if after == format!("{};", name) {
                names.entry("opaque").or_default().push(name);
            }
        } else if let Some(rest) = line.strip_prefix("typedef enum ") {
            names.entry("typedef").or_default().push(identifier(rest));
        } else if let Some(rest) = line.strip_prefix("typedef ") {
            if let Some(pointer) = rest.find("(*") {
                names.entry("typedef").or_default().push(identifier(&rest[pointer + 2..]));
            } else if rest.starts_with("ctl_") {
                let last = rest.trim_end_matches(';').split_whitespace().last().unwrap().to_string();
                names.entry("typedef").or_default().push(last);
            }
        } else if let Some(rest) = line.strip_prefix("#define ") {
            let name = identifier(rest);
            let function_like = rest[name.len()..].starts_with('(');
            if name.starts_with("CTL_") && name != "CTL_EXPORT" && !function_like {
                names.entry("constant").or_default().push(name);
            }
        } else if line.starts_with("CTL_") && line.contains('=') {
            let name = identifier(line);
            let after = line[name.len()..].trim_start();
            if after.starts_with('=') {
                names.entry("constant").or_default().push(name);
            }
        }
    }
    names
}

#[test]
fn nothing_in_the_header_is_missing() {
    let names = header_names();
    let rust_structs: Vec<&str> = sys::struct_layouts().iter().map(|l| l.name).collect();
    let declared = |kind: &str, name: &str| -> bool {
        match kind {
            "function" => sys::FUNCTIONS.iter().any(|f| f.name == name),
            "struct" => rust_structs.contains(&name),
            "opaque" => sys::OPAQUE_TYPES.contains(&name),
            "typedef" => sys::TYPE_ALIASES.iter().any(|(n, _)| *n == name),
            // A *_STRUCT_SIZE constant is the abi_size() of its struct.
            "constant" => {
                sys::CONSTANTS.iter().any(|(n, _)| *n == name)
                    || rust_structs.iter().any(|s| format!("{}_STRUCT_SIZE", s.to_uppercase()) == name)
            }
            _ => unreachable!(),
        }
    };
    let mut missing = Vec::new();
    let mut total = 0;
    for (kind, list) in &names {
        for name in list {
            total += 1;
            if !declared(kind, name) {
                missing.push(format!("{} {}", kind, name));
            }
        }
    }
    assert!(missing.is_empty(), "catalyst.h declares what catalyst::sys does not:\n{}", missing.join("\n"));
    // The parse found what the header is known to hold, so an empty parse cannot pass.
    assert!(names["function"].len() >= 50, "{:?}", names["function"]);
    assert!(names["struct"].len() >= 17 && names["constant"].len() >= 100, "{} names", total);
}

#[test]
fn linked_library_reports_the_declared_version() {
    // A newer minor only appends, so it serves these declarations too.
    let (major, minor) = catalyst::abi_version();
    assert_eq!(major, sys::CTL_ABI_VERSION_MAJOR);
    assert!(minor >= sys::CTL_ABI_VERSION_MINOR, "library 1.{} is older than these declarations", minor);
}
