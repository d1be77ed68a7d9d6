// macros.rs — the declaration macros of `sys`. Each one declares ABI items exactly as Rust
// needs them and, beside them, a table naming every item with its Rust type as text, so
// that tests/abi_sync.rs can have a C++ compiler check each one against abi/catalyst.h.

/// The byte offset of `$field` in `$type`, like C's offsetof (std's arrived after 1.63).
macro_rules! offset_of {
    ($type:ty, $field:ident) => {{
        let value = ::core::mem::MaybeUninit::<$type>::uninit();
        let base = value.as_ptr();
        // SAFETY: addr_of! computes the field's address without reading the uninitialised
        // value or making a reference to it.
        #[allow(unused_unsafe)]
        let field = unsafe { ::core::ptr::addr_of!((*base).$field) };
        field as *const u8 as usize - base as *const u8 as usize
    }};
}

/// `#[repr(C)]` structs, each with `zeroed()` and a layout entry in `struct_layouts()`.
macro_rules! abi_structs {
    ($($(#[$meta:meta])* pub struct $name:ident { $(pub $field:ident: $type:ty,)* })*) => {
        $(
            $(#[$meta])*
            #[repr(C)]
            #[derive(Clone, Copy)]
            pub struct $name { $(pub $field: $type,)* }

            impl $name {
                /// Every field zero: NULL pointers, false, 0 (what C's `= {0}` gives).
                pub fn zeroed() -> Self {
                    // SAFETY: every field is an integer, float, bool, raw pointer, nullable
                    // function pointer or array of those, for which all-zero bytes are valid.
                    unsafe { ::core::mem::zeroed() }
                }
                /// Where the last field ends: what the C header's `*_STRUCT_SIZE` constant
                /// computes as offsetof(last field) + sizeof(last field).
                pub fn abi_size() -> usize {
                    let mut end = 0usize;
                    $(
                        let field_end = offset_of!($name, $field) + ::core::mem::size_of::<$type>();
                        if field_end > end {
                            end = field_end;
                        }
                    )*
                    end
                }
            }
        )*

        /// The layout of every struct declared here, as this Rust compiler lays it out.
        pub fn struct_layouts() -> Vec<StructLayout> {
            vec![$(StructLayout {
                name: stringify!($name),
                size: ::core::mem::size_of::<$name>(),
                align: ::core::mem::align_of::<$name>(),
                abi_size: $name::abi_size(),
                fields: vec![$(FieldLayout {
                    name: stringify!($field),
                    offset: offset_of!($name, $field),
                    rust_type: stringify!($type),
                },)*],
            },)*]
        }
    };
}

/// Constants, listed in `CONSTANTS` with their values.
macro_rules! abi_constants {
    ($($name:ident: $type:ty = $value:expr;)*) => {
        $(pub const $name: $type = $value;)*
        /// Every constant declared here, by its C name.
        pub const CONSTANTS: &[(&str, i128)] = &[$((stringify!($name), $name as i128),)*];
    };
}

/// Type aliases for C enum and function pointer typedefs, listed in `TYPE_ALIASES`.
macro_rules! abi_type_aliases {
    ($($name:ident = $type:ty;)*) => {
        $(pub type $name = $type;)*
        /// Every alias declared here: its C name and its Rust type as text.
        pub const TYPE_ALIASES: &[(&str, &str)] = &[$((stringify!($name), stringify!($type)),)*];
    };
}

/// Opaque handle types (incomplete in C), listed in `OPAQUE_TYPES`.
macro_rules! abi_opaque_types {
    ($($(#[$meta:meta])* $name:ident;)*) => {
        $(
            $(#[$meta])*
            #[repr(C)]
            pub struct $name {
                _private: [u8; 0],
                // Neither Send, Sync nor Unpin: only the safe wrappers decide that.
                _marker: ::core::marker::PhantomData<(*mut u8, ::core::marker::PhantomPinned)>,
            }
        )*
        /// Every opaque type declared here.
        pub const OPAQUE_TYPES: &[&str] = &[$(stringify!($name),)*];
    };
}

/// The library's functions, listed in `FUNCTIONS` with their Rust signatures as text.
macro_rules! abi_functions {
    ($($(#[$meta:meta])* pub fn $name:ident($($arg:ident: $type:ty),* $(,)?) -> $ret:ty;)*) => {
        #[allow(clippy::unused_unit)]
        extern "C" {
            $($(#[$meta])* pub fn $name($($arg: $type),*) -> $ret;)*
        }
        /// Every function declared here.
        pub const FUNCTIONS: &[AbiFunction] = &[$(AbiFunction {
            name: stringify!($name),
            args: &[$(stringify!($type)),*],
            ret: stringify!($ret),
        },)*];
    };
}
