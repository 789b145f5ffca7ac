fn main() {
    let path = std::env::args().nth(1).unwrap();
    let text = std::fs::read_to_string(path).unwrap();
    let tree = lockstep_syntax::parse(lockstep_syntax::Grammar::Cuda, &text).unwrap();
    fn walk(n: lockstep_syntax::Node, src: &str, depth: usize) {
        let field = "";
        let t = if n.child_count() == 0 { format!(" {:?}", &src[n.byte_range()]) } else { String::new() };
        println!("{}{}{}{}", "  ".repeat(depth), field, n.kind(), t);
        let mut c = n.walk();
        for (i, ch) in n.children(&mut c).enumerate() {
            let _ = i;
            if let Some(f) = n.field_name_for_child(i as u32) { print!("{}[{}]", "  ".repeat(depth+1), f); println!(); }
            walk(ch, src, depth + 1);
        }
    }
    walk(tree.root_node(), &text, 0);
}
