// Assignment to swizzles of a function variable and, through a pointer, of a storage vector;
// 'b--b' is b - (-b).
@group(0) @binding(0) var<storage, read_write> buf: array<vec4<u32>, 2>;
@group(0) @binding(1) var<storage, read_write> ints: array<i32, 2>;

@compute @workgroup_size(1)
fn main() {
  var idx = 1u;
  var v = vec4u(1, 2, 3, 4);
  v.zy = vec2(5, 6);          // 1 6 5 4
  v.yz.yx = vec2(99, 100);    // 1 100 99 4
  v.rgb *= vec3(2);           // 2 200 198 4
  v.zyx[idx] = 7;             // y: 2 7 198 4
  v.xyz[0] += 10;             // 12 7 198 4
  buf[0] = v;

  buf[1] = vec4u(1, 2, 3, 4);
  let p = &buf[1];
  p.wx = vec2(40, 10);        // 10 2 3 40
  p.yz.y += 30;               // 10 2 33 40
  p.zyx[idx] = 20;            // 10 20 33 40

  var b = 3;
  ints[0] = b--b;
  ints[1] = 7--b--2;
}
