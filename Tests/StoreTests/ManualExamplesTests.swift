import Foundation
import JSON
import Store
import Testing

/// One example from the MongoDB manual: a filter and the documents it returns.
struct ManualCase: Sendable, CustomTestStringConvertible {
    let filter: String
    let expected: Set<String>
    init(_ filter: String, _ expected: [String]) {
        self.filter = filter
        self.expected = Set(expected)
    }
    var testDescription: String { filter }
}

/// A manual page: its sample documents, the fields worth indexing, and its examples.
struct ManualPage: Sendable, CustomTestStringConvertible {
    let name: String
    let documents: [String]
    let indexes: [String]
    let cases: [ManualCase]
    var testDescription: String { name }
}

/// The "inventory" documents of "Query Documents" and "Query on Embedded/Nested Documents".
let inventoryBasic = [
    #"{"_id":"journal","item":"journal","qty":25,"size":{"h":14,"w":21,"uom":"cm"},"status":"A"}"#,
    #"{"_id":"notebook","item":"notebook","qty":50,"size":{"h":8.5,"w":11,"uom":"in"},"status":"A"}"#,
    #"{"_id":"paper","item":"paper","qty":100,"size":{"h":8.5,"w":11,"uom":"in"},"status":"D"}"#,
    #"{"_id":"planner","item":"planner","qty":75,"size":{"h":22.85,"w":30,"uom":"cm"},"status":"D"}"#,
    #"{"_id":"postcard","item":"postcard","qty":45,"size":{"h":10,"w":15.25,"uom":"cm"},"status":"A"}"#,
]

let manualPages: [ManualPage] = [
    ManualPage(name: "Query Documents", documents: inventoryBasic, indexes: ["status", "qty", "item"], cases: [
        ManualCase(#"{}"#, ["journal", "notebook", "paper", "planner", "postcard"]),
        ManualCase(#"{"status":"D"}"#, ["paper", "planner"]),
        ManualCase(#"{"status":{"$in":["A","D"]}}"#, ["journal", "notebook", "paper", "planner", "postcard"]),
        ManualCase(#"{"status":"A","qty":{"$lt":30}}"#, ["journal"]),
        ManualCase(#"{"$or":[{"status":"A"},{"qty":{"$lt":30}}]}"#, ["journal", "notebook", "postcard"]),
        ManualCase(#"{"status":"A","$or":[{"qty":{"$lt":30}},{"item":{"$regex":"^p"}}]}"#, ["journal", "postcard"]),
        // Numbers never equal strings, in either direction.
        ManualCase(#"{"qty":"25"}"#, []),
        ManualCase(#"{"status":{"$gt":5}}"#, []),
        ManualCase(#"{"qty":{"$gte":"0"}}"#, []),
        ManualCase(#"{"qty":25.0}"#, ["journal"]),
    ]),
    ManualPage(name: "Query on Embedded/Nested Documents", documents: inventoryBasic,
               indexes: ["size", "size.uom", "size.h", "status"], cases: [
        ManualCase(#"{"size":{"h":14,"w":21,"uom":"cm"}}"#, ["journal"]),
        ManualCase(#"{"size":{"w":21,"h":14,"uom":"cm"}}"#, []),
        ManualCase(#"{"size":{"h":14,"w":21}}"#, []),
        ManualCase(#"{"size.uom":"in"}"#, ["notebook", "paper"]),
        ManualCase(#"{"size.h":{"$lt":15}}"#, ["journal", "notebook", "paper", "postcard"]),
        ManualCase(#"{"size.h":{"$lt":15},"size.uom":"in","status":"D"}"#, ["paper"]),
        ManualCase(#"{"size":{"$eq":{"h":14,"w":21,"uom":"cm"}}}"#, ["journal"]),
    ]),
    ManualPage(name: "Query an Array", documents: [
        #"{"_id":"journal","item":"journal","qty":25,"tags":["blank","red"],"dim_cm":[14,21]}"#,
        #"{"_id":"notebook","item":"notebook","qty":50,"tags":["red","blank"],"dim_cm":[14,21]}"#,
        #"{"_id":"paper","item":"paper","qty":100,"tags":["red","blank","plain"],"dim_cm":[14,21]}"#,
        #"{"_id":"planner","item":"planner","qty":75,"tags":["blank","red"],"dim_cm":[22.85,30]}"#,
        #"{"_id":"postcard","item":"postcard","qty":45,"tags":["blue"],"dim_cm":[10,15.25]}"#,
    ], indexes: ["tags", "dim_cm", "dim_cm.1"], cases: [
        ManualCase(#"{"tags":["red","blank"]}"#, ["notebook"]),
        ManualCase(#"{"tags":{"$all":["red","blank"]}}"#, ["journal", "notebook", "paper", "planner"]),
        ManualCase(#"{"tags":"red"}"#, ["journal", "notebook", "paper", "planner"]),
        ManualCase(#"{"dim_cm":{"$gt":25}}"#, ["planner"]),
        // Different elements may satisfy the two bounds.
        ManualCase(#"{"dim_cm":{"$gt":15,"$lt":20}}"#, ["journal", "notebook", "paper", "postcard"]),
        ManualCase(#"{"dim_cm":{"$elemMatch":{"$gt":22,"$lt":30}}}"#, ["planner"]),
        ManualCase(#"{"dim_cm.1":{"$gt":25}}"#, ["planner"]),
        ManualCase(#"{"tags":{"$size":3}}"#, ["paper"]),
        // $in on an array field is overlap.
        ManualCase(#"{"tags":{"$in":["blue","plain"]}}"#, ["paper", "postcard"]),
        ManualCase(#"{"tags":{"$nin":["blue","plain"]}}"#, ["journal", "notebook", "planner"]),
        ManualCase(#"{"tags":{"$ne":"red"}}"#, ["postcard"]),
        ManualCase(#"{"tags.0":"red"}"#, ["notebook", "paper"]),
        ManualCase(#"{"tags":[["red","blank"]]}"#, []),
        ManualCase(#"{"tags":{"$in":[["blank","red"]]}}"#, ["journal", "planner"]),
    ]),
    ManualPage(name: "Query an Array of Embedded Documents", documents: [
        #"{"_id":"journal","item":"journal","instock":[{"warehouse":"A","qty":5},{"warehouse":"C","qty":15}]}"#,
        #"{"_id":"notebook","item":"notebook","instock":[{"warehouse":"C","qty":5}]}"#,
        #"{"_id":"paper","item":"paper","instock":[{"warehouse":"A","qty":60},{"warehouse":"B","qty":15}]}"#,
        #"{"_id":"planner","item":"planner","instock":[{"warehouse":"A","qty":40},{"warehouse":"B","qty":5}]}"#,
        #"{"_id":"postcard","item":"postcard","instock":[{"warehouse":"B","qty":15},{"warehouse":"C","qty":35}]}"#,
    ], indexes: ["instock", "instock.qty", "instock.warehouse", "instock.0.qty"], cases: [
        ManualCase(#"{"instock":{"warehouse":"A","qty":5}}"#, ["journal"]),
        ManualCase(#"{"instock":{"qty":5,"warehouse":"A"}}"#, []),
        ManualCase(#"{"instock.0.qty":{"$lte":20}}"#, ["journal", "notebook", "postcard"]),
        ManualCase(#"{"instock.qty":{"$lte":20}}"#, ["journal", "notebook", "paper", "planner", "postcard"]),
        ManualCase(#"{"instock":{"$elemMatch":{"qty":5,"warehouse":"A"}}}"#, ["journal"]),
        ManualCase(#"{"instock":{"$elemMatch":{"qty":{"$gt":10,"$lte":20}}}}"#, ["journal", "paper", "postcard"]),
        ManualCase(#"{"instock.qty":{"$gt":10,"$lte":20}}"#, ["journal", "paper", "planner", "postcard"]),
        ManualCase(#"{"instock.qty":5,"instock.warehouse":"A"}"#, ["journal", "planner"]),
        ManualCase(#"{"instock.1.warehouse":"B"}"#, ["paper", "planner"]),
        ManualCase(#"{"instock.warehouse":{"$nin":["A","B"]}}"#, ["notebook"]),
    ]),
    ManualPage(name: "Query for Null or Missing Fields", documents: [
        #"{"_id":"1","item":null}"#,
        #"{"_id":"2"}"#,
    ], indexes: ["item"], cases: [
        ManualCase(#"{"item":null}"#, ["1", "2"]),
        ManualCase(#"{"item":{"$eq":null}}"#, ["1", "2"]),
        ManualCase(#"{"item":{"$type":10}}"#, ["1"]),
        ManualCase(#"{"item":{"$type":"null"}}"#, ["1"]),
        ManualCase(#"{"item":{"$exists":false}}"#, ["2"]),
        ManualCase(#"{"item":{"$exists":true}}"#, ["1"]),
        ManualCase(#"{"item":{"$ne":null}}"#, []),
        ManualCase(#"{"item":{"$in":[null]}}"#, ["1", "2"]),
        ManualCase(#"{"item":{"$gte":null}}"#, ["1", "2"]),
        ManualCase(#"{"item":{"$gt":null}}"#, []),
    ]),
    ManualPage(name: "$in and $nin", documents: [
        #"{"_id":"Pens","item":"Pens","quantity":350,"tags":["school","office"]}"#,
        #"{"_id":"Erasers","item":"Erasers","quantity":15,"tags":["school","home"]}"#,
        #"{"_id":"Maps","item":"Maps","tags":["office","storage"]}"#,
        #"{"_id":"Books","item":"Books","quantity":5,"tags":["school","storage","home"]}"#,
    ], indexes: ["quantity", "tags"], cases: [
        ManualCase(#"{"quantity":{"$in":[5,15]}}"#, ["Erasers", "Books"]),
        ManualCase(#"{"tags":{"$in":["home","school"]}}"#, ["Pens", "Erasers", "Books"]),
        ManualCase(#"{"quantity":{"$nin":[5,15]}}"#, ["Pens", "Maps"]),
        ManualCase(#"{"tags":{"$nin":["school"]}}"#, ["Maps"]),
        ManualCase(#"{"quantity":{"$in":[]}}"#, []),
        ManualCase(#"{"quantity":{"$nin":[]}}"#, ["Pens", "Erasers", "Maps", "Books"]),
        ManualCase(#"{"quantity":{"$in":["5","15"]}}"#, []),
        ManualCase(#"{"quantity":{"$in":[null,350]}}"#, ["Pens", "Maps"]),
        ManualCase(#"{"_id":{"$in":["Pens","Maps","Nope"]}}"#, ["Pens", "Maps"]),
    ]),
    ManualPage(name: "$ne", documents: [
        #"{"_id":"1","item":"nuts","quantity":30,"carrier":{"name":"Shipit","fee":3}}"#,
        #"{"_id":"2","item":"bolts","quantity":50,"carrier":{"name":"Orange","fee":7}}"#,
        #"{"_id":"3","item":"washers","quantity":10,"carrier":{"name":"Shipit","fee":1}}"#,
    ], indexes: ["quantity", "carrier.fee", "carrier.state"], cases: [
        ManualCase(#"{"quantity":{"$ne":20}}"#, ["1", "2", "3"]),
        ManualCase(#"{"quantity":{"$ne":30}}"#, ["2", "3"]),
        ManualCase(#"{"carrier.fee":{"$ne":1}}"#, ["1", "2"]),
        ManualCase(#"{"carrier.state":{"$ne":"NY"}}"#, ["1", "2", "3"]),
        ManualCase(#"{"quantity":{"$ne":"30"}}"#, ["1", "2", "3"]),
    ]),
    ManualPage(name: "$exists", documents: [
        #"{"_id":"1","saffron":5,"cinnamon":5,"mustard":null}"#,
        #"{"_id":"2","saffron":3,"cinnamon":null,"mustard":8}"#,
        #"{"_id":"3","saffron":null,"cinnamon":3,"mustard":9}"#,
        #"{"_id":"4","saffron":1,"cinnamon":2,"mustard":3}"#,
        #"{"_id":"5","saffron":2,"mustard":5}"#,
        #"{"_id":"6","saffron":3,"cinnamon":2}"#,
        #"{"_id":"7","saffron":4}"#,
        #"{"_id":"8","cinnamon":2,"mustard":4}"#,
        #"{"_id":"9","cinnamon":2}"#,
        #"{"_id":"10","mustard":6}"#,
    ], indexes: ["saffron", "cinnamon"], cases: [
        ManualCase(#"{"saffron":{"$exists":true}}"#, ["1", "2", "3", "4", "5", "6", "7"]),
        ManualCase(#"{"cinnamon":{"$exists":false}}"#, ["5", "7", "10"]),
        ManualCase(#"{"saffron":{"$exists":true,"$nin":[5,15]}}"#, ["2", "3", "4", "5", "6", "7"]),
        ManualCase(#"{"cinnamon":null}"#, ["2", "5", "7", "10"]),
        ManualCase(#"{"cinnamon":{"$exists":1}}"#, ["1", "2", "3", "4", "6", "8", "9"]),
    ]),
    ManualPage(name: "$all", documents: [
        #"{"_id":"xyz","code":"xyz","tags":["school","book","bag","headphone","appliance"],"qty":[{"size":"S","num":10,"color":"blue"},{"size":"M","num":45,"color":"blue"},{"size":"L","num":100,"color":"green"}]}"#,
        #"{"_id":"abc","code":"abc","tags":["appliance","school","book"],"qty":[{"size":"6","num":100,"color":"green"},{"size":"6","num":50,"color":"blue"},{"size":"8","num":100,"color":"brown"}]}"#,
        #"{"_id":"efg","code":"efg","tags":["school","book"],"qty":[{"size":"S","num":10,"color":"blue"},{"size":"M","num":100,"color":"blue"},{"size":"L","num":100,"color":"green"}]}"#,
        #"{"_id":"ijk","code":"ijk","tags":["electronics","school"],"qty":[{"size":"M","num":100,"color":"green"}]}"#,
    ], indexes: ["tags", "qty.num"], cases: [
        ManualCase(#"{"tags":{"$all":["appliance","school","book"]}}"#, ["xyz", "abc"]),
        ManualCase(#"{"qty":{"$all":[{"$elemMatch":{"size":"M","num":{"$gt":50}}},{"$elemMatch":{"num":100,"color":"green"}}]}}"#, ["efg", "ijk"]),
        ManualCase(#"{"qty.num":{"$all":[50]}}"#, ["abc"]),
        ManualCase(#"{"qty.num":50}"#, ["abc"]),
        ManualCase(#"{"tags":{"$all":["school"]}}"#, ["xyz", "abc", "efg", "ijk"]),
        ManualCase(#"{"tags":{"$all":[]}}"#, []),
        ManualCase(#"{"code":{"$all":["abc"]}}"#, ["abc"]),
    ]),
    ManualPage(name: "$size", documents: [
        #"{"_id":"0","field":[]}"#,
        #"{"_id":"1","field":["red"]}"#,
        #"{"_id":"2","field":["red","green"]}"#,
        #"{"_id":"3","field":["red","green","blue"]}"#,
        #"{"_id":"s","field":"red"}"#,
        #"{"_id":"m"}"#,
        #"{"_id":"n","field":[["a","b"]]}"#,
    ], indexes: ["field"], cases: [
        ManualCase(#"{"field":{"$size":2}}"#, ["2"]),
        ManualCase(#"{"field":{"$size":1}}"#, ["1", "n"]),
        ManualCase(#"{"field":{"$size":0}}"#, ["0"]),
        ManualCase(#"{"field":{"$not":{"$size":1}}}"#, ["0", "2", "3", "s", "m"]),
    ]),
    ManualPage(name: "$elemMatch scores", documents: [
        #"{"_id":"1","results":[82,85,88]}"#,
        #"{"_id":"2","results":[75,88,89]}"#,
    ], indexes: ["results"], cases: [
        ManualCase(#"{"results":{"$elemMatch":{"$gte":80,"$lt":85}}}"#, ["1"]),
        ManualCase(#"{"results":{"$gte":80,"$lt":85}}"#, ["1", "2"]),
        ManualCase(#"{"results":{"$elemMatch":{"$eq":75}}}"#, ["2"]),
    ]),
    ManualPage(name: "$elemMatch survey", documents: [
        #"{"_id":"1","results":[{"product":"abc","score":10},{"product":"xyz","score":5}]}"#,
        #"{"_id":"2","results":[{"product":"abc","score":8},{"product":"xyz","score":7}]}"#,
        #"{"_id":"3","results":[{"product":"abc","score":7},{"product":"xyz","score":8}]}"#,
        #"{"_id":"4","results":[{"product":"abc","score":7},{"product":"def","score":8}]}"#,
    ], indexes: ["results.product", "results.score"], cases: [
        ManualCase(#"{"results":{"$elemMatch":{"product":"xyz","score":{"$gte":8}}}}"#, ["3"]),
        ManualCase(#"{"results":{"$elemMatch":{"product":"xyz"}}}"#, ["1", "2", "3"]),
        ManualCase(#"{"results.product":"xyz"}"#, ["1", "2", "3"]),
        ManualCase(#"{"results":{"$elemMatch":{"product":{"$ne":"xyz"}}}}"#, ["1", "2", "3", "4"]),
        ManualCase(#"{"results.product":{"$ne":"xyz"}}"#, ["4"]),
        ManualCase(#"{"results.product":"xyz","results.score":{"$gte":8}}"#, ["1", "2", "3"]),
        ManualCase(#"{"results":{"$elemMatch":{"$or":[{"score":10},{"product":"def"}]}}}"#, ["1", "4"]),
    ]),
    ManualPage(name: "$regex", documents: [
        #"{"_id":"100","sku":"abc123","description":"Single line description."}"#,
        #"{"_id":"101","sku":"abc789","description":"First line\nSecond line"}"#,
        #"{"_id":"102","sku":"xyz456","description":"Many spaces before     line"}"#,
        #"{"_id":"103","sku":"xyz789","description":"Multiple\nline description"}"#,
        #"{"_id":"104","sku":"Abc789","description":"SKU starts with A"}"#,
    ], indexes: ["sku"], cases: [
        ManualCase(#"{"sku":{"$regex":"789$"}}"#, ["101", "103", "104"]),
        ManualCase(#"{"sku":{"$regex":"^ABC","$options":"i"}}"#, ["100", "101", "104"]),
        ManualCase(#"{"sku":{"$regex":"^ABC"}}"#, []),
        ManualCase(#"{"description":{"$regex":"^S","$options":"m"}}"#, ["100", "101", "104"]),
        ManualCase(#"{"description":{"$regex":"^S"}}"#, ["100", "104"]),
        ManualCase(#"{"description":{"$regex":"m.*line","$options":"si"}}"#, ["102", "103"]),
        ManualCase(#"{"description":{"$regex":"m.*line","$options":"i"}}"#, ["102"]),
        ManualCase(#"{"sku":{"$regex":"abc #category code\n123 #item number","$options":"x"}}"#, ["100"]),
        ManualCase(#"{"sku":{"$not":{"$regex":"^abc"}}}"#, ["102", "103", "104"]),
        ManualCase(#"{"sku":{"$in":["abc123"],"$regex":"^a"}}"#, ["100"]),
    ]),
    ManualPage(name: "$not", documents: [
        #"{"_id":"1","item":"Syrup","price":1.5}"#,
        #"{"_id":"2","item":"pears","price":1.99}"#,
        #"{"_id":"3","item":"plums","price":2.5}"#,
        #"{"_id":"4","item":"apples"}"#,
        #"{"_id":"5","price":"cheap"}"#,
    ], indexes: ["price", "item"], cases: [
        ManualCase(#"{"price":{"$not":{"$gt":1.99}}}"#, ["1", "2", "4", "5"]),
        ManualCase(#"{"price":{"$lte":1.99}}"#, ["1", "2"]),
        ManualCase(#"{"item":{"$not":{"$regex":"^p.*"}}}"#, ["1", "4", "5"]),
        ManualCase(#"{"price":{"$not":{"$type":"string"}}}"#, ["1", "2", "3", "4"]),
    ]),
    ManualPage(name: "$nor $and $or", documents: [
        #"{"_id":"1","item":"a","price":1.99,"qty":10,"sale":true}"#,
        #"{"_id":"2","item":"b","price":1.99,"qty":30,"sale":false}"#,
        #"{"_id":"3","item":"c","price":2.5,"qty":5,"sale":true}"#,
        #"{"_id":"4","item":"d","price":3,"qty":60,"sale":false}"#,
        #"{"_id":"5","item":"e","price":10,"qty":25}"#,
        #"{"_id":"6","item":"f","qty":100,"sale":false}"#,
        #"{"_id":"7","item":"g"}"#,
    ], indexes: ["price", "qty", "sale"], cases: [
        ManualCase(#"{"$nor":[{"price":1.99},{"sale":true}]}"#, ["4", "5", "6", "7"]),
        ManualCase(#"{"$nor":[{"price":1.99},{"qty":{"$lt":20}},{"sale":true}]}"#, ["4", "5", "6", "7"]),
        ManualCase(#"{"$nor":[{"price":1.99},{"price":{"$exists":false}},{"sale":true},{"sale":{"$exists":false}}]}"#, ["4"]),
        ManualCase(#"{"$and":[{"price":{"$ne":1.99}},{"price":{"$exists":true}}]}"#, ["3", "4", "5"]),
        ManualCase(#"{"$and":[{"$or":[{"qty":{"$lt":10}},{"qty":{"$gt":50}}]},{"$or":[{"sale":true},{"price":{"$lt":5}}]}]}"#, ["3", "4"]),
        ManualCase(#"{"$or":[{"qty":{"$lt":20}},{"price":10}]}"#, ["1", "3", "5"]),
        ManualCase(#"{"$or":[{"price":1.99}],"$comment":"ignored"}"#, ["1", "2"]),
    ]),
    ManualPage(name: "$type", documents: [
        #"{"_id":"1","address":"2030 Martian Way","zipCode":"90698345"}"#,
        #"{"_id":"2","address":"156 Lunar Place","zipCode":43339374}"#,
        #"{"_id":"3","address":"2324 Pluto Place","zipCode":3921412}"#,
        #"{"_id":"4","address":"55 Saturn Ring","zipCode":88602117.5}"#,
        #"{"_id":"5","address":"104 Venus Drive","zipCode":["834847278","1893289032"]}"#,
        #"{"_id":"6","address":"Nowhere","zipCode":{"main":"1"}}"#,
        #"{"_id":"7","address":"Lost","zipCode":true}"#,
        #"{"_id":"8","address":"Void","zipCode":null}"#,
    ], indexes: ["zipCode"], cases: [
        ManualCase(#"{"zipCode":{"$type":2}}"#, ["1", "5"]),
        ManualCase(#"{"zipCode":{"$type":"string"}}"#, ["1", "5"]),
        ManualCase(#"{"zipCode":{"$type":"number"}}"#, ["2", "3", "4"]),
        ManualCase(#"{"zipCode":{"$type":"double"}}"#, ["2", "3", "4"]),
        ManualCase(#"{"zipCode":{"$type":["string","number"]}}"#, ["1", "2", "3", "4", "5"]),
        ManualCase(#"{"zipCode":{"$type":[2,1]}}"#, ["1", "2", "3", "4", "5"]),
        ManualCase(#"{"zipCode":{"$type":"array"}}"#, ["5"]),
        ManualCase(#"{"zipCode":{"$type":4}}"#, ["5"]),
        ManualCase(#"{"zipCode":{"$type":"object"}}"#, ["6"]),
        ManualCase(#"{"zipCode":{"$type":"bool"}}"#, ["7"]),
        ManualCase(#"{"zipCode":{"$type":8}}"#, ["7"]),
        ManualCase(#"{"zipCode":{"$type":"null"}}"#, ["8"]),
    ]),
    ManualPage(name: "$mod", documents: [
        #"{"_id":"1","item":"abc123","qty":0}"#,
        #"{"_id":"2","item":"xyz123","qty":5}"#,
        #"{"_id":"3","item":"ijk123","qty":12}"#,
        #"{"_id":"4","item":"neg","qty":-4}"#,
        #"{"_id":"5","item":"negodd","qty":-5}"#,
        #"{"_id":"6","item":"float","qty":12.7}"#,
        #"{"_id":"7","item":"str","qty":"12"}"#,
    ], indexes: ["qty"], cases: [
        ManualCase(#"{"qty":{"$mod":[4,0]}}"#, ["1", "3", "4", "6"]),
        // Floating point divisors are truncated towards zero.
        ManualCase(#"{"qty":{"$mod":[4.0,0]}}"#, ["1", "3", "4", "6"]),
        ManualCase(#"{"qty":{"$mod":[4.5,0]}}"#, ["1", "3", "4", "6"]),
        ManualCase(#"{"qty":{"$mod":[4.99,0]}}"#, ["1", "3", "4", "6"]),
        // The remainder takes the dividend's sign.
        ManualCase(#"{"qty":{"$mod":[4,-1]}}"#, ["5"]),
        ManualCase(#"{"qty":{"$mod":[4,1]}}"#, ["2"]),
        ManualCase(#"{"qty":{"$not":{"$mod":[2,0]}}}"#, ["2", "5", "7"]),
    ]),
    // jstests/core/match_numeric_components.js: numeric path components.
    ManualPage(name: "numeric path components", documents: [
        #"{"_id":"0","a":42}"#,
        #"{"_id":"1","a":[42]}"#,
        #"{"_id":"2","a":{"0":42}}"#,
        #"{"_id":"3","a":[[42]]}"#,
        #"{"_id":"4","a":[{"0":42}]}"#,
        #"{"_id":"5","a":{"0":[42]}}"#,
        #"{"_id":"6","a":{"0":{"0":42}}}"#,
        #"{"_id":"7","a":[[[42]]]}"#,
        #"{"_id":"8","a":[[{"0":42}]]}"#,
        #"{"_id":"9","a":[{"0":[42]}]}"#,
        #"{"_id":"10","a":[{"0":{"0":42}}]}"#,
        #"{"_id":"11","a":{"0":[[42]]}}"#,
        #"{"_id":"12","a":{"0":[{"0":42}]}}"#,
    ], indexes: ["a.0"], cases: [
        ManualCase(#"{"a.0":42}"#, ["1", "2", "4", "5", "9"]),
        ManualCase(#"{"a.0":{"$gte":42}}"#, ["1", "2", "4", "5", "9"]),
        ManualCase(#"{"a.0":{"$in":[42]}}"#, ["1", "2", "4", "5", "9"]),
    ]),
    // jstests/core/null_query_semantics.js (legacy dotted-path null semantics) and arrayfind5.js.
    ManualPage(name: "null query semantics", documents: [
        #"{"_id":"a_null","a":null}"#,
        #"{"_id":"a_number","a":4}"#,
        #"{"_id":"a_subobject_b_not_null","a":{"b":"hi"}}"#,
        #"{"_id":"a_subobject_b_null","a":{"b":null}}"#,
        #"{"_id":"a_empty_subobject","a":{}}"#,
        #"{"_id":"no_a"}"#,
        #"{"_id":"a_empty_array","a":[]}"#,
        #"{"_id":"a_object_array_no_b_nulls","a":[{"b":1},{"b":3},{"b":"string"}]}"#,
        #"{"_id":"a_object_array_some_b_nulls","a":[{"b":null},{"b":3},{"b":null}]}"#,
        #"{"_id":"a_object_array_some_b_missing","a":[{"b":3},{}]}"#,
        #"{"_id":"a_value_array_all_nulls","a":[null,null]}"#,
        #"{"_id":"a_value_array_no_nulls","a":[1,"string",4]}"#,
        #"{"_id":"a_value_array_with_null","a":[1,"string",null,4]}"#,
        #"{"_id":"a_scalar_then_object","a":[5,{"b":1}]}"#,
    ], indexes: ["a", "a.b", "a.1"], cases: [
        ManualCase(#"{"a":{"$eq":null}}"#, ["a_null", "no_a", "a_value_array_all_nulls", "a_value_array_with_null"]),
        ManualCase(#"{"a":{"$in":[null,75]}}"#, ["a_null", "no_a", "a_value_array_all_nulls", "a_value_array_with_null"]),
        ManualCase(#"{"a":{"$ne":null}}"#, ["a_number", "a_subobject_b_not_null", "a_subobject_b_null", "a_empty_subobject",
                                            "a_empty_array", "a_object_array_no_b_nulls", "a_object_array_some_b_nulls",
                                            "a_object_array_some_b_missing", "a_value_array_no_nulls", "a_scalar_then_object"]),
        ManualCase(#"{"a":{"$nin":[null,[]]}}"#, ["a_number", "a_subobject_b_not_null", "a_subobject_b_null", "a_empty_subobject",
                                                   "a_object_array_no_b_nulls", "a_object_array_some_b_nulls",
                                                   "a_object_array_some_b_missing", "a_value_array_no_nulls", "a_scalar_then_object"]),
        ManualCase(#"{"a":{"$elemMatch":{"$eq":null}}}"#, ["a_value_array_all_nulls", "a_value_array_with_null"]),
        ManualCase(#"{"a.b":{"$eq":null}}"#, ["a_empty_subobject", "a_null", "a_number", "a_subobject_b_null", "no_a",
                                               "a_object_array_some_b_nulls", "a_object_array_some_b_missing"]),
        ManualCase(#"{"a.b":{"$ne":null}}"#, ["a_subobject_b_not_null", "a_object_array_no_b_nulls", "a_empty_array",
                                               "a_value_array_all_nulls", "a_value_array_no_nulls", "a_value_array_with_null",
                                               "a_scalar_then_object"]),
        ManualCase(#"{"a.b":{"$in":[null,75]}}"#, ["a_empty_subobject", "a_null", "a_number", "a_subobject_b_null", "no_a",
                                                    "a_object_array_some_b_nulls", "a_object_array_some_b_missing"]),
        ManualCase(#"{"a":{"$elemMatch":{"b":{"$eq":null}}}}"#, ["a_object_array_some_b_nulls", "a_object_array_some_b_missing"]),
        ManualCase(#"{"a":{"$elemMatch":{"b":{"$ne":null}}}}"#, ["a_object_array_no_b_nulls", "a_object_array_some_b_nulls",
                                                                  "a_object_array_some_b_missing", "a_scalar_then_object"]),
        ManualCase(#"{"a.b":1}"#, ["a_object_array_no_b_nulls", "a_scalar_then_object"]),
        // A positional component past the end of an array reaches nothing, so it does not match null.
        // Object elements lacking a field "1" count as missing, as for "a.b".
        ManualCase(#"{"a.1":null}"#, ["a_null", "a_number", "a_subobject_b_not_null", "a_subobject_b_null",
                                       "a_empty_subobject", "no_a", "a_object_array_no_b_nulls",
                                       "a_object_array_some_b_nulls", "a_object_array_some_b_missing",
                                       "a_value_array_all_nulls", "a_scalar_then_object"]),
        ManualCase(#"{"a.b":{"$exists":false}}"#, ["a_null", "a_number", "a_empty_subobject", "no_a", "a_empty_array",
                                                   "a_value_array_all_nulls", "a_value_array_no_nulls", "a_value_array_with_null"]),
    ]),
]

@Suite("MongoDB manual examples")
struct ManualExamplesTests {
    @Test("manual page examples, unindexed and indexed", arguments: manualPages)
    func page(_ page: ManualPage) throws {
        let store = try TestStore()
        try store.insert("plain", page.documents)
        try store.insert("indexed", page.documents)
        try store.index("indexed", page.indexes)
        for example in page.cases {
            for collection in ["plain", "indexed"] {
                let found = try store.idSet(collection, json(example.filter))
                #expect(found == example.expected, "\(page.name) [\(collection)] \(example.filter)")
                let count = try store.reader.count(collection, filter: json(example.filter))
                #expect(count == example.expected.count, "count \(page.name) [\(collection)] \(example.filter)")
            }
        }
    }

    @Test("indexes declared before the documents are written give the same answers", arguments: manualPages)
    func indexesFirst(_ page: ManualPage) throws {
        let store = try TestStore()
        try store.index("c", page.indexes)
        try store.insert("c", page.documents)
        for example in page.cases {
            #expect(try store.idSet("c", json(example.filter)) == example.expected, "\(page.name) \(example.filter)")
        }
    }

    @Test("documents stay findable through replace, patch and delete with indexes")
    func writesKeepIndexesInStep() throws {
        let store = try TestStore()
        try store.index("c", ["qty", "tags"])
        try store.insert("c", [#"{"_id":"x","qty":5,"tags":["a","b"]}"#, #"{"_id":"y","qty":7,"tags":["c"]}"#])
        _ = store.writer.commitBatch([
            { w in _ = try w.replace(in: "c", id: "x", object(#"{"qty":9,"tags":["z"]}"#)) },
            { w in _ = try w.patch(in: "c", id: "y", object(#"{"qty":5}"#)) },
        ]).map { try? $0.get() }
        #expect(try store.idSet("c", json(#"{"qty":5}"#)) == ["y"])
        #expect(try store.idSet("c", json(#"{"tags":"a"}"#)) == [])
        #expect(try store.idSet("c", json(#"{"tags":"z"}"#)) == ["x"])
        #expect(try store.idSet("c", json(#"{"qty":{"$gt":6}}"#)) == ["x"])
        _ = store.writer.commitBatch([{ w in try w.delete(from: "c", id: "x") }]).map { try? $0.get() }
        #expect(try store.idSet("c", json(#"{"tags":"z"}"#)) == [])
        #expect(try store.idSet("c", json(#"{}"#)) == ["y"])
    }
}
