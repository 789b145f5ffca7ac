//! Prints the IR of a file: `cargo run -p lockstep-lower --example lower FILE`.
fn main() {
    let path = std::env::args().nth(1).expect("usage: lower FILE");
    let text = std::fs::read_to_string(&path).expect("readable file");
    let lang = lockstep_lower::Lang::from_path(path.as_ref()).expect("known extension");
    let tree = lockstep_syntax::parse(lang.grammar().expect("a tree-sitter language"), &text).expect("parse");
    let mut db = lockstep_source::SourceDb::new();
    let file = db.add(path.clone(), text.clone());
    let out = lockstep_lower::lower_tree(&text, &tree, lang, &lockstep_lower::FileSpans(file), &Default::default());
    print!("{}", out.module);
    for f in &out.module.functions {
        let errs = lockstep_ir::verify(f);
        if !errs.is_empty() {
            println!("VERIFY {}: {:?}", f.name, errs);
        }
    }
    print!("{}", lockstep_diag::render_human(&db, &out.diagnostics, false));
}
