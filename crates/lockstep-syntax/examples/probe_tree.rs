fn dump(n: tree_sitter::Node, src: &str, depth: usize) {
    let field = "";
    let t = &src[n.byte_range()];
    let t: String = t.chars().take(40).collect::<String>().replace('\n', " ");
    println!("{}{} {}{:?}", "  ".repeat(depth), n.kind(), field, if n.child_count() == 0 { t } else { String::new() });
    let mut c = n.walk();
    for (i, ch) in n.children(&mut c).enumerate() {
        if let Some(f) = n.field_name_for_child(i as u32) { print!("{}[{}]\n", "  ".repeat(depth+1), f); }
        dump(ch, src, depth + 1);
    }
}
fn main() {
    let path = std::env::args().nth(1).unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    let mut p = tree_sitter::Parser::new();
    p.set_language(&tree_sitter_cuda::LANGUAGE.into()).unwrap();
    let t = p.parse(&text, None).unwrap();
    dump(t.root_node(), &text, 0);
}
